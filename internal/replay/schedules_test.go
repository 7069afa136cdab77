package replay

import (
	"context"
	"reflect"
	"testing"
)

// TestSchedulesAreWhatEvaluateScores: SpotHedge's hand-worked window (TestSpotHedgeHandWorked)
// returned tick by tick: held spot 2,2,0,1,2,2 and on-demand 1,1,0,1,1,1, and the same score
// Evaluate reports for it.
func TestSchedulesAreWhatEvaluateScores(t *testing.T) {
	c := []int{1, 1, 0, 1, 1, 1, 1}
	tr := tinyTrace(c, c, c)
	rules := Rules{Target: 1, Extra: 1, ColdStart: 1, Window: 6, ODRatio: 3}
	specs, err := ParsePolicies("spothedge")
	if err != nil {
		t.Fatal(err)
	}
	scheds, offsets, err := Schedules(context.Background(), tr, Config{Rules: rules, Offsets: []int{0}}, specs[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(scheds) != 1 || !reflect.DeepEqual(offsets, []int{0}) {
		t.Fatalf("%d schedules at offsets %v, want one at 0", len(scheds), offsets)
	}
	s := scheds[0]
	var spot []int
	for _, held := range s.Held {
		n := 0
		for _, h := range held {
			n += h
		}
		spot = append(spot, n)
	}
	if want := []int{2, 2, 0, 1, 2, 2}; !reflect.DeepEqual(spot, want) {
		t.Errorf("spot held %v, want %v", spot, want)
	}
	if want := []int{1, 1, 0, 1, 1, 1}; !reflect.DeepEqual(s.OnDemand, want) {
		t.Errorf("on-demand held %v, want %v", s.OnDemand, want)
	}
	got, want := score(s, rules), evaluateOne(t, tr, rules, "spothedge")
	if !near(got.CostPct, want.CostPct) || !near(got.AvailabilityPct, want.AvailabilityPct) {
		t.Errorf("schedule scores %.2f%% / %.2f%%, Evaluate %.2f%% / %.2f%%", got.AvailabilityPct, got.CostPct, want.AvailabilityPct, want.CostPct)
	}
}

func TestSchedulesRefusesAnUnknownPolicy(t *testing.T) {
	c := []int{1, 1, 1}
	_, _, err := Schedules(context.Background(), tinyTrace(c), Config{Rules: Rules{Target: 1, Window: 2, ODRatio: 3}, Offsets: []int{0}},
		PolicySpec{Name: "nope", Extra: -1})
	if err == nil {
		t.Fatal("an unknown policy was accepted")
	}
}
