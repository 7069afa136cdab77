package replay

import (
	"slices"
	"testing"

	"github.com/bursar-dev/bursar/internal/serving"
)

// servingCase is a small hand-made serving window: spot H100 in zone a whose capacity drops from
// 2 replicas to 1 once, on-demand A100 in zone b and H100 in zone c, and demand that rises from
// one H100's worth to nearly two, then more than two, with a few hours of the same demand before.
func servingCase() *serving.Window {
	const n, past = 100, 180
	w := &serving.Window{ColdStart: 5, Sources: []serving.Source{
		{Type: "H100-80GB", Zone: "a", Spot: true, USDPerHour: 15, Rate: 800, GPUs: 8},
		{Type: "A100-80GB", Zone: "b", USDPerHour: 30, Rate: 170, GPUs: 8},
		{Type: "H100-80GB", Zone: "c", USDPerHour: 45, Rate: 800, GPUs: 8},
	}}
	for t := range past {
		w.Past = append(w.Past, 600+float64(t%7))
	}
	for t := range n {
		d := 600.0
		switch {
		case t >= 70:
			d = 1900
		case t >= 30:
			d = 1500
		}
		w.Demand = append(w.Demand, d+float64(t%5))
		c := 2
		if t >= 50 && t < 80 {
			c = 1
		}
		w.Capacity = append(w.Capacity, []int{c, serving.Unlimited, serving.Unlimited})
	}
	return w
}

// replayServing runs the named serving policy over w.
func replayServing(t *testing.T, name string, w *serving.Window) serving.Schedule {
	t.Helper()
	p, err := serving.New(name, serving.Env{Sources: w.Sources, ColdStart: w.ColdStart, PastDemand: w.Past}, w)
	if err != nil {
		t.Fatal(err)
	}
	s, err := serving.Simulate(p, w)
	if c, ok := p.(interface{ Close() error }); ok {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestServingServiceMatchesDirect replays the hand-made window through the arbiter service and
// through the planner alone (bursar-direct), and wants the same replicas held on every source at
// every tick.
func TestServingServiceMatchesDirect(t *testing.T) {
	w := servingCase()
	want := replayServing(t, "bursar-direct", w)
	got := replayServing(t, "bursar", w)
	for i := range want.Held {
		if !slices.Equal(got.Held[i], want.Held[i]) {
			t.Errorf("tick %d (demand %.0f, spot capacity %d): service holds %v, direct %v",
				i, w.Demand[i], w.Capacity[i][0], got.Held[i], want.Held[i])
		}
	}
}
