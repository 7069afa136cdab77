package jobreplay

import (
	"math"
	"slices"
	"testing"
	"time"
)

// TestBursarThroughTheLiveService: the bursar policy (there was none: the replay knew only
// policies that decide alone) runs a job through the live arbiter and the sim market: it takes
// the spot zone there is, is preempted when that zone's spot goes, moves to the other zone's
// spot, and meets its deadline for less than on-demand only costs.
func TestBursarThroughTheLiveService(t *testing.T) {
	set := Setting{Tick: 600, Work: 4 * 3600, Deadline: 8 * 3600, Overhead: 180, SpotPrice: RefSpotPrice, ODPrice: RefODPrice}
	n := int((set.Deadline + 4*3600) / set.Tick)
	avail := make([][]bool, n)
	for k := range avail {
		avail[k] = []bool{k < 10, k >= 8} // zone a's spot goes at tick 10; zone b's is there from tick 8
	}
	p, err := newService(Env{Setting: set, Zones: []string{"us-west-2a", "us-west-2b"}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := Simulate(set, avail, p)
	if cerr := p.(*service).Close(); cerr != nil {
		t.Fatalf("the live service: %v", cerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	od, err := Simulate(set, avail, onDemandOnly{})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Met || out.Cost >= od.Cost || out.Preemptions != 1 || out.SpotTicks < 20 {
		t.Errorf("bursar = %+v (on-demand only costs %.2f): want the deadline met for less, one preemption, mostly spot", out, od.Cost)
	}
}

// recording keeps the live service's choice and its lateness at every tick.
type recording struct {
	*service
	choices []Choice
	lates   []int64
}

func (r *recording) Decide(v *View) Choice {
	c := r.service.Decide(v)
	r.choices = append(r.choices, c)
	r.lates = append(r.lates, r.Late())
	return c
}

// simulateLive runs the window through the live service on zones, recording each tick's choice.
func simulateLive(t *testing.T, set Setting, avail [][]bool, zones []string) (*recording, Outcome) {
	t.Helper()
	p, err := newService(Env{Setting: set, Zones: zones})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recording{service: p.(*service)}
	out, err := Simulate(set, avail, rec)
	if cerr := rec.Close(); cerr != nil {
		t.Fatalf("the live service: %v", cerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	return rec, out
}

// TestBursarKeepsOnDemandWhileSpotIsMissing: a job the live service runs on on-demand while spot
// is missing tries spot, and each try that finds none leaves it on on-demand: no tick is idle
// once it runs (a move stopped on-demand first, and each try left the job idle a tick). The
// tick's choice is what the fleet runs (it was what the arbiter asked for: a spot launch pending
// for capacity counted as spot). When spot is back the job moves once; each try that found none
// was given up at the next report, so the move launches at the tick's start, the next report
// sees the new instance with capacity and the round after it retires on-demand: the tick's bill
// plus settleAfter of on-demand held beside spot.
func TestBursarKeepsOnDemandWhileSpotIsMissing(t *testing.T) {
	set := Setting{Tick: 600, Work: 6 * 3600, Deadline: 10 * 3600, Overhead: 180, SpotPrice: RefSpotPrice, ODPrice: RefODPrice}
	n := int((set.Deadline + 4*3600) / set.Tick)
	avail := make([][]bool, n)
	for k := range avail {
		// Spot, with a short spell without it each hour, and then none for three hours.
		avail[k] = []bool{!(k < 24 && k%6 == 5 || k >= 24 && k < 42)}
	}
	rec, out := simulateLive(t, set, avail, []string{"us-west-2a"})
	first := slices.Index(rec.choices, OD)
	if first < 0 || !out.Met {
		t.Fatalf("choices %v, outcome %+v: want on-demand at some tick and the deadline met", rec.choices, out)
	}
	moves := 0
	for k, c := range rec.choices[first:] {
		if c == Idle {
			t.Errorf("tick %d is idle after the job ran on on-demand; choices %v", first+k, rec.choices)
		}
		if k > 0 && c.Kind == Spot && rec.choices[first+k-1] == OD {
			moves++
		}
	}
	overlap := set.ODPrice * settleAfter.Hours()
	if moves != 1 || math.Abs(out.OverlapCost-overlap) > 1e-9 || math.Abs(out.Cost-cost(&set, out.SpotTicks, out.ODTicks)-overlap) > 1e-9 {
		t.Errorf("choices %v, outcome %+v: want one move off on-demand and the ticks' bill plus %v of on-demand", rec.choices, out, settleAfter)
	}
}

// TestBursarTriesTheNextZoneWithinTheTick: a job reclaimed in one zone whose first try lands in a
// zone without spot is placed in a third zone that has it within the same tick, as arbiter run
// does (the failed launch is given up at the next report, which wakes a pass): no tick is idle
// (the replay ran one round a tick, so each try that found none cost the job a whole tick, and
// across eight zones the live policy cost more than in its best single zone). The seconds spent
// trying are the launch's lateness, lost work.
func TestBursarTriesTheNextZoneWithinTheTick(t *testing.T) {
	set := Setting{Tick: 600, Work: 4 * 3600, Deadline: 8 * 3600, Overhead: 180, SpotPrice: RefSpotPrice, ODPrice: RefODPrice}
	n := int((set.Deadline + 4*3600) / set.Tick)
	avail := make([][]bool, n)
	for k := range avail {
		avail[k] = []bool{k < 10, false, k >= 8} // a goes at tick 10; b never has spot; c has it from tick 8
	}
	rec, out := simulateLive(t, set, avail, []string{"us-west-2a", "us-west-2b", "us-west-2c"})
	if !out.Met || slices.Contains(rec.choices, Idle) || len(rec.choices) < 11 || rec.choices[10] != SpotIn(2) {
		t.Fatalf("choices %v, outcome %+v: want spot in zone c from tick 10, no idle tick, the deadline met", rec.choices, out)
	}
	if rec.lates[10] != int64(retryAfter/time.Second) {
		t.Errorf("lateness by tick %v: want %v at tick 10 (one try found none)", rec.lates, retryAfter)
	}
}
