package costseries

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/events"

	"github.com/bursar-dev/bursar/internal/replay"
	"github.com/bursar-dev/bursar/internal/serving"
)

// TestFromScheduleByHand sums a hand-made replica schedule: 2 zones, 20 ticks of 30 s (two
// steps), spot at $1.02/h and on-demand at $3.06/h.
func TestFromScheduleByHand(t *testing.T) {
	tr := &replay.Trace{Name: "T", Zones: []replay.Zone{{Name: "z1_v100_1"}, {Name: "z2_v100_1"}}}
	var s replay.Schedule
	for tk := range 25 { // 25 ticks: the last half step is left out
		held := []int{2, 0}
		if tk >= 10 {
			held = []int{1, 0}
		}
		od := 0
		if tk >= 15 {
			od = 1
		}
		s.Held, s.OnDemand = append(s.Held, held), append(s.OnDemand, od)
	}
	r := replicaRun(tr, replay.Rules{ODRatio: 3}, s, "w")
	ss, err := r.series(r.held())
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 2 { // z2 never spent: no series
		t.Fatalf("got %d series, want z1 spot and on-demand", len(ss))
	}
	z1, od := ss[0], ss[1]
	if z1.Key != (Key{"w", "z1", "V100", Spot}) || od.Key != (Key{"w", "any", "V100", OnDemand}) {
		t.Fatalf("keys %v, %v", z1.Key, od.Key)
	}
	if got := z1.Key.String(); got != "workload=w,location=z1,gpu_model=V100,market=spot" {
		t.Errorf("key %q, want the cost.anomaly event's series form", got)
	}
	want := map[string][]float64{
		"z1 $/h": {2.04, 1.02}, "z1 GPUs": {2, 1}, "od $/h": {0, 1.53}, "od GPUs": {0, 0.5},
	}
	got := map[string][]float64{"z1 $/h": z1.USDPerHour, "z1 GPUs": z1.GPUs, "od $/h": od.USDPerHour, "od GPUs": od.GPUs}
	for name, w := range want {
		if !near(got[name], w) {
			t.Errorf("%s = %v, want %v", name, got[name], w)
		}
	}
}

// TestFromServingByHand sums a hand-made serving schedule: two sources, 5 ticks (one step).
// Demand 150 tokens/s against ready capacity 100 + 100: served 150/s, shared half and half.
func TestFromServingByHand(t *testing.T) {
	w := &serving.Window{
		Sources: []serving.Source{
			{Type: "H100", Zone: "a", Spot: true, USDPerHour: 6, Rate: 100, GPUs: 8},
			{Type: "A100", Zone: "b", USDPerHour: 12, Rate: 50, GPUs: 8},
		},
		Demand: []float64{150, 150, 150, 150, 150},
	}
	s := serving.Schedule{}
	for range 5 {
		s.Held = append(s.Held, []int{1, 2})
		s.Ready = append(s.Ready, []int{1, 2})
	}
	r := servingRun(w, s, "w")
	ss, err := r.series(r.held())
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 2 {
		t.Fatalf("got %d series", len(ss))
	}
	a, b := ss[0], ss[1]
	if a.Key.Market != Spot || b.Key.Market != OnDemand {
		t.Fatalf("markets %s, %s", a.Key.Market, b.Key.Market)
	}
	if !near(a.USDPerHour, []float64{6}) || !near(b.USDPerHour, []float64{24}) ||
		!near(a.GPUs, []float64{8}) || !near(b.GPUs, []float64{16}) {
		t.Fatalf("spend %v %v, GPUs %v %v", a.USDPerHour, b.USDPerHour, a.GPUs, b.GPUs)
	}
	if !near(a.Tokens, []float64{75 * 300}) || !near(b.Tokens, []float64{75 * 300}) {
		t.Fatalf("tokens %v %v, want 22500 each", a.Tokens, b.Tokens)
	}
}

func near(got, want []float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-9 {
			return false
		}
	}
	return true
}

// TestEventsReportChangesAndEvery15Minutes checks what a group reports: its first tick, each
// change, and a repeat after 15 minutes without one; a group that never spent reports nothing.
func TestEventsReportChangesAndEvery15Minutes(t *testing.T) {
	held := make([]int, 70) // 35 minutes of 30 s ticks
	for tk := range held {
		held[tk] = 1
		if tk >= 5 && tk < 8 {
			held[tk] = 2
		}
	}
	r := run{tick: 30 * time.Second, groups: []group{
		{key: Key{"w", "z", "V100", Spot}, provider: "aws", offer: "p3.2xlarge", usd: 1, gpus: 1, held: held},
		{key: Key{"w", "any", "V100", OnDemand}, provider: "aws", offer: "p3.2xlarge", usd: 3, gpus: 1, held: make([]int, 70)},
	}}
	var got []int
	for _, e := range r.events() {
		rs := e.(*events.ReplicaState)
		if rs.Location != "z" || rs.Ready != held[rs.At.Sub(Epoch)/r.tick] {
			t.Fatalf("event %+v", rs)
		}
		got = append(got, int(rs.At.Sub(Epoch)/r.tick))
	}
	want := []int{0, 5, 8, 38, 68} // 38 and 68: 30 ticks (15 min) after the last report
	if !slices.Equal(got, want) {
		t.Fatalf("reported at ticks %v, want %v", got, want)
	}
}

// TestFillCarriesAStateUntilItIsStale checks the read-back rule: a group holds its last state
// for 15 minutes, then nothing.
func TestFillCarriesAStateUntilItIsStale(t *testing.T) {
	held := make([]int, 40)
	held[2] = 3
	fill(held, 2, 40, 30*time.Second)
	for tk, n := range held {
		want := 0
		if tk >= 2 && tk <= 32 {
			want = 3
		}
		if n != want {
			t.Fatalf("tick %d holds %d, want %d", tk, n, want)
		}
	}
}
