package replay

import (
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/placement"
)

func TestBursarLedger(t *testing.T) {
	p, err := newBursar(Env{Zones: []string{"a", "b"}, Rules: Rules{Target: 3, Extra: 1, ColdStart: 2, Window: 10, ODRatio: 3, Tick: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	b := p.(*bursar)
	b.live[0] = []instance{{id: 0, launch: 0}, {id: 1, launch: 3}, {id: 2, launch: 5}}
	b.live[1] = []instance{{id: 3, launch: 5}}
	// At tick 5 zone a keeps 1 (the oldest) and zone b keeps none.
	b.reconcile([]int{1, 0}, 5)
	if len(b.live[0]) != 1 || b.live[0][0].id != 0 || len(b.live[1]) != 0 {
		t.Fatalf("live = %v, want only instance 0 left", b.live)
	}
	wantA := []placement.Observation{
		{At: b.at(5), Kind: placement.ObsLaunchFailed},
		{At: b.at(5), Kind: placement.ObsPreempted, Lived: time.Minute},
	}
	if len(b.history[0]) != 2 || b.history[0][0] != wantA[0] || b.history[0][1] != wantA[1] {
		t.Errorf("zone a history = %v, want %v", b.history[0], wantA)
	}
	if len(b.history[1]) != 1 || b.history[1][0].Kind != placement.ObsLaunchFailed {
		t.Errorf("zone b history = %v, want one failed launch", b.history[1])
	}
	// Launched at 0 with D=2: ready at tick 2, so known ready when deciding tick 3, not tick 2.
	if got := b.state(instance{launch: 0}, 2); got != placement.StateLaunching {
		t.Errorf("state at 2 = %s, want launching", got)
	}
	if got := b.state(instance{launch: 0}, 3); got != placement.StateReady {
		t.Errorf("state at 3 = %s, want ready", got)
	}
	b.live[0] = append(b.live[0], instance{id: 9, launch: 6})
	b.drain(0, 1, 8)
	if len(b.live[0]) != 1 || b.live[0][0].id != 0 {
		t.Errorf("drain kept %v, want the oldest (0)", b.live[0])
	}
	if last := b.history[0][len(b.history[0])-1]; last.Kind != placement.ObsEnded || last.Lived != time.Minute {
		t.Errorf("drain recorded %+v, want ended after 1m", last)
	}
}

// TestBursarOnSteadyMarket: with every zone always roomy, the planner must be available at every
// scored tick and cost less than on-demand.
func TestBursarOnSteadyMarket(t *testing.T) {
	c := repeat(8, 200)
	got := evaluateOne(t, tinyTrace(c, c, c), Rules{Target: 3, Extra: 1, ColdStart: 4, Window: 120, ODRatio: 3}, "bursar")
	if got.AvailabilityPct != 100 || got.CostPct >= 100 {
		t.Errorf("bursar: %.1f%% available at %.1f%% of on-demand; want 100%% below 100%%", got.AvailabilityPct, got.CostPct)
	}
}

// TestBursarWarmUp: the planner learns from the market before the window but starts the window
// holding nothing, like every other policy.
func TestBursarWarmUp(t *testing.T) {
	p, err := newBursar(Env{Zones: []string{"a", "b"}, Rules: Rules{Target: 2, Extra: 1, ColdStart: 2, Window: 10, ODRatio: 3}})
	if err != nil {
		t.Fatal(err)
	}
	b := p.(*bursar)
	past := make([][]int, 50)
	for s := range past {
		past[s] = []int{0, 5} // zone a never has room
	}
	b.warmUp(past)
	for i, l := range b.live {
		if len(l) != 0 {
			t.Errorf("source %d holds %d instances after the warm-up, want none", i, len(l))
		}
	}
	seen := 0
	for _, h := range b.history {
		for _, ob := range h {
			seen++
			if ob.At.After(b.at(0)) {
				t.Errorf("observation %+v is after the window's start", ob)
			}
		}
	}
	if seen == 0 {
		t.Error("the warm-up observed nothing")
	}
	for _, ob := range b.history[0] {
		if ob.Kind != placement.ObsLaunchFailed {
			t.Errorf("zone a (never any room) shows %s, want only failed launches", ob.Kind)
		}
	}
}

// TestOneMoveOnTwoOffersIsOneMove: a move that launches on two offers at once used to shift the
// move history twice, so the previous move was forgotten and a move whose launches all failed
// kept its own cooldown instead of giving way to the one before.
func TestOneMoveOnTwoOffersIsOneMove(t *testing.T) {
	p, err := newBursar(Env{Zones: []string{"a", "b"}, Rules: Rules{Target: 3, Extra: 1, ColdStart: 2, Window: 10, ODRatio: 3, Tick: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	b := p.(*bursar)
	earlier := b.at(1)
	b.lastMove = earlier
	b.apply(placement.Decision{Actions: []placement.Action{
		{Kind: placement.ActionLaunch, Offer: "a", Count: 1, Reason: placement.ReasonCheaperOffer},
		{Kind: placement.ActionLaunch, Offer: "b", Count: 1, Reason: placement.ReasonCheaperOffer},
	}}, 7)
	if !b.lastMove.Equal(b.at(7)) || !b.prevMove.Equal(earlier) {
		t.Fatalf("last move %v, previous %v; want %v and %v", b.lastMove, b.prevMove, b.at(7), earlier)
	}
}
