package placement_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/placement"
)

// TestTraceSweep prints the replay figures of a few policy variants (BURSAR_TRACE_SWEEP=1); it is
// a tool for choosing defaults, not a check.
func TestTraceSweep(t *testing.T) {
	if os.Getenv("BURSAR_TRACE_SWEEP") == "" {
		t.Skip("set BURSAR_TRACE_SWEEP=1 to compare policy variants on the real traces")
	}
	type variant struct {
		name string
		p    placement.Policy
	}
	var vs []variant
	for _, hr := range []float64{0.005, 0.02} {
		for _, mh := range []int{1, 2} {
			for _, fc := range []float64{0.8, 0.95} {
				vs = append(vs, variant{name: fmt.Sprintf("risk=%v maxh=%d conf=%v", hr, mh, fc),
					p: placement.Policy{HedgeRisk: hr, MaxHedge: mh, FallbackConfidence: fc}})
			}
		}
	}
	_ = time.Hour
	for _, c := range simCases(t) {
		tr := loadTrace(t, c.dir, c.binary)
		offs := c.offsets
		if offs == nil {
			offs = evenOffsets(tr.length())
		}
		sh := meanOver(tr, offs, func(seed int) simPolicy {
			return &spotHedge{rng: rand.New(rand.NewPCG(uint64(seed), 0))}
		})
		for _, v := range vs {
			pl := meanOver(tr, offs, func(int) simPolicy { return &plannerPolicy{policy: v.p} })
			t.Logf("%-12.12s %-22s avail %+5.2f cost %3.0f%% of spothedge", tr.name, v.name, pl.avail-sh.avail, 100*pl.cost/sh.cost)
		}
	}
}

func ftoa(f float64) string { return strconvF(f) }

func strconvF(f float64) string { return fmt.Sprint(f) }
