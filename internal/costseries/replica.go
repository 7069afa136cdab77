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
	replicaOffer       = "p3.2xlarge"
)

// replicaTick is REPLAY.md's tick.
const replicaTick = 30 * time.Second

// replicaReplay replays policy over one long window covering the whole trace under dir (the
// replay's default rules otherwise: 3 ready replicas, a spare, 2 min cold start) and returns
// its groups: one per zone on spot and one for on-demand.
func replicaReplay(ctx context.Context, dir, policy string) (run, error) {
	tr, err := replay.LoadTrace(os.DirFS(filepath.Dir(dir)), filepath.Base(dir), replay.LoadOptions{TickSeconds: int(replicaTick / time.Second)})
	if err != nil {
		return run{}, fmt.Errorf("loading trace %s: %w", dir, err)
	}
	o := replay.DefaultOptions()
	o.Window = time.Duration(tr.Len-1) * replicaTick
	o.Offsets = []int{0}
	cfg, err := o.Config()
	if err != nil {
		return run{}, err
	}
	specs, err := replay.ParsePolicies(policy)
	if err != nil {
		return run{}, err
	}
	scheds, _, err := replay.Schedules(ctx, tr, cfg, specs[0])
	if err != nil {
		return run{}, fmt.Errorf("replaying %s on %s: %w", policy, tr.Name, err)
	}
	return replicaRun(tr, cfg.Rules, scheds[0], strings.ToLower(tr.Name)+"-"+policy), nil
}

// replicaRun is one window's schedule as replica groups: every held spot instance (launching
// included, as the replay bills it) at the spot price in its zone, on-demand at its price.
func replicaRun(tr *replay.Trace, rules replay.Rules, s replay.Schedule, workload string) run {
	ticks := len(s.Held)
	r := run{tick: replicaTick}
	for z, zone := range tr.Zones {
		g := group{key: Key{workload, zoneName(zone.Name), replicaGPUType, Spot}, provider: "aws",
			offer: replicaOffer, usd: replicaOnDemandUSD / rules.ODRatio, gpus: 1, held: make([]int, ticks)}
		for t := range ticks {
			g.held[t] = s.Held[t][z]
		}
		r.groups = append(r.groups, g)
	}
	od := group{key: Key{workload, "any", replicaGPUType, OnDemand}, provider: "aws",
		offer: replicaOffer, usd: replicaOnDemandUSD, gpus: 1, held: make([]int, ticks)}
	copy(od.held, s.OnDemand)
	return run{tick: replicaTick, groups: append(r.groups, od)}
}

// zoneName is the zone of a trace file's name, "us-east-2a_v100_1" → "us-east-2a".
func zoneName(file string) string {
	z, _, _ := strings.Cut(file, "_")
	return z
}
