package jobs

import (
	"testing"
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
