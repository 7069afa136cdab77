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
// sources, prices, 5-minute cold start) and returns one series per source with some spend, with
// the output tokens each served: a tick's served tokens, min(demand, ready capacity) × 60 as the
// replay's metrics count them, shared among sources by their ready capacity.
func servingSeries(ctx context.Context, in *serving.Inputs, policy string) ([]Series, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cfg := serving.DefaultConfig()
	ticks := in.Ticks()
	w := in.Window(0, ticks, cfg.ColdStart)
	p, err := serving.New(policy, serving.Env{Sources: w.Sources, ColdStart: w.ColdStart, Seed: cfg.Seed, PastDemand: w.Past}, w)
	if err != nil {
		return nil, err
	}
	s, err := serving.Simulate(p, w)
	if c, ok := p.(interface{ Close() error }); ok {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return nil, fmt.Errorf("replaying %s on %s: %w", policy, in.Demand.Name, err)
	}
	return fromServing(w, s, demandName(in.Demand.Name)+"-"+policy)
}

// fromServing sums a serving schedule into one series per source.
func fromServing(w *serving.Window, s serving.Schedule, workload string) ([]Series, error) {
	per, err := ticksPerStep(servingTick)
	if err != nil {
		return nil, err
	}
	ticks := len(s.Held)
	accs := make([]*accumulator, len(w.Sources))
	for i, src := range w.Sources {
		market := OnDemand
		if src.Spot {
			market = Spot
		}
		accs[i] = newAccumulator(Key{workload, src.Zone, src.Type, market}, ticks, per, true)
	}
	for t := range ticks {
		capacity := 0.0
		for i, src := range w.Sources {
			capacity += float64(s.Ready[t][i]) * src.Rate
		}
		served := min(w.Demand[t], capacity) * 60
		for i, src := range w.Sources {
			held := float64(s.Held[t][i])
			share := 0.0
			if capacity > 0 {
				share = float64(s.Ready[t][i]) * src.Rate / capacity
			}
			accs[i].add(t, held*src.USDPerHour, held*float64(src.GPUs), served*share)
		}
	}
	return spent(accs), nil
}

// demandName is a demand file's short name, ".../m-large_per_minute.csv" → "m-large".
func demandName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), "_per_minute.csv")
}
