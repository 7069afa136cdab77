package costseries

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/serving"
)

// servingTick is SERVING.md's tick.
const servingTick = time.Minute

// servingSeries replays policy over one window covering the whole of in (SERVING.md's rules: its
// sources, prices, 5-minute cold start) and returns its groups, one per source (servingRun).
func servingReplay(ctx context.Context, in *serving.Inputs, policy string) (run, error) {
	if err := ctx.Err(); err != nil {
		return run{}, err
	}
	cfg := serving.DefaultConfig()
	ticks := in.Ticks()
	w := in.Window(0, ticks, cfg.ColdStart)
	p, err := serving.New(policy, serving.Env{Sources: w.Sources, ColdStart: w.ColdStart, Seed: cfg.Seed, PastDemand: w.Past}, w)
	if err != nil {
		return run{}, err
	}
	s, err := serving.Simulate(p, w)
	if c, ok := p.(interface{ Close() error }); ok {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return run{}, fmt.Errorf("replaying %s on %s: %w", policy, in.Demand.Name, err)
	}
	return servingRun(w, s, demandName(in.Demand.Name)+"-"+policy), nil
}

// servingRun is a serving schedule as one group per source, with the output tokens each served:
// a tick's served tokens, min(demand, ready capacity) × 60 as the replay's metrics count them,
// shared among sources by their ready capacity.
func servingRun(w *serving.Window, s serving.Schedule, workload string) run {
	ticks := len(s.Held)
	r := run{tick: servingTick, groups: make([]group, len(w.Sources))}
	for i, src := range w.Sources {
		market := OnDemand
		if src.Spot {
			market = Spot
		}
		r.groups[i] = group{key: Key{workload, src.Zone, src.Type, market}, provider: "gcp", offer: src.Type,
			usd: src.USDPerHour, gpus: src.GPUs, held: make([]int, ticks), tokens: make([]float64, ticks)}
	}
	for t := range ticks {
		capacity := 0.0
		for i, src := range w.Sources {
			capacity += float64(s.Ready[t][i]) * src.Rate
		}
		served := min(w.Demand[t], capacity) * 60
		for i, src := range w.Sources {
			r.groups[i].held[t] = s.Held[t][i]
			if capacity > 0 {
				share := float64(s.Ready[t][i]) * src.Rate / capacity
				r.groups[i].tokens[t] = served * share
			}
		}
	}
	return r
}

// demandName is a demand file's short name, ".../m-large_per_minute.csv" → "m-large".
func demandName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), "_per_minute.csv")
}
