package costseries

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/replay"
)

// Replica replay prices. REPLAY.md counts cost in spot units with on-demand at 3× spot; the
// series are in dollars, so a unit is priced from the skypilot catalog's p3.2xlarge (one V100,
// the traces' instance type): $3.06/h on demand in every us-* region
// (../shared/data/prices/skypilot-catalog/aws_vms_gpu_subset.csv), and spot at a third of it
// by the replay's own ratio, so the dollars keep the replay's cost shares exactly.
const (
	replicaOnDemandUSD = 3.06
	replicaGPUType     = "V100"
)

// replicaTick is REPLAY.md's tick.
const replicaTick = 30 * time.Second

// replicaSeries replays policy over one long window covering the whole trace under dir (the
// replay's default rules otherwise: 3 ready replicas, a spare, 2 min cold start) and returns
// one series per zone on spot and one for on-demand, each with some spend.
func replicaSeries(ctx context.Context, dir, policy string) ([]Series, error) {
	tr, err := replay.LoadTrace(os.DirFS(filepath.Dir(dir)), filepath.Base(dir), replay.LoadOptions{TickSeconds: int(replicaTick / time.Second)})
	if err != nil {
		return nil, fmt.Errorf("loading trace %s: %w", dir, err)
	}
	o := replay.DefaultOptions()
	o.Window = time.Duration(tr.Len-1) * replicaTick
	o.Offsets = []int{0}
	cfg, err := o.Config()
	if err != nil {
		return nil, err
	}
	specs, err := replay.ParsePolicies(policy)
	if err != nil {
		return nil, err
	}
	scheds, _, err := replay.Schedules(ctx, tr, cfg, specs[0])
	if err != nil {
		return nil, fmt.Errorf("replaying %s on %s: %w", policy, tr.Name, err)
	}
	return fromSchedule(tr, cfg.Rules, scheds[0], strings.ToLower(tr.Name)+"-"+policy)
}

// fromSchedule sums one window's schedule into series: every held spot instance (launching
// included, as the replay bills it) at the spot price in its zone, on-demand at its price.
func fromSchedule(tr *replay.Trace, rules replay.Rules, s replay.Schedule, workload string) ([]Series, error) {
	per, err := ticksPerStep(replicaTick)
	if err != nil {
		return nil, err
	}
	ticks := len(s.Held)
	spotUSD := replicaOnDemandUSD / rules.ODRatio
	accs := make([]*accumulator, 0, len(tr.Zones)+1)
	for _, z := range tr.Zones {
		accs = append(accs, newAccumulator(Key{workload, zoneName(z.Name), replicaGPUType, Spot}, ticks, per, false))
	}
	od := newAccumulator(Key{workload, "any", replicaGPUType, OnDemand}, ticks, per, false)
	for t := range ticks {
		for z, n := range s.Held[t] {
			accs[z].add(t, float64(n)*spotUSD, float64(n), 0)
		}
		n := float64(s.OnDemand[t])
		od.add(t, n*replicaOnDemandUSD, n, 0)
	}
	return spent(append(accs, od)), nil
}

// zoneName is the zone of a trace file's name, "us-east-2a_v100_1" → "us-east-2a".
func zoneName(file string) string {
	z, _, _ := strings.Cut(file, "_")
	return z
}

// spent keeps the series that spent something: a market a policy never used is not a series.
func spent(accs []*accumulator) []Series {
	var out []Series
	for _, a := range accs {
		if a.anySpend {
			out = append(out, a.series())
		}
	}
	return out
}
