package replay

import (
	"context"
	"math"
	"strings"
	"testing"
)

// tinyTrace builds a trace from per-zone capacity rows written by hand.
func tinyTrace(caps ...[]int) *Trace {
	tr := &Trace{Name: "tiny", Len: len(caps[0])}
	for z, c := range caps {
		tr.Zones = append(tr.Zones, Zone{Name: string(rune('a' + z)), Capacity: c})
		tr.Len = min(tr.Len, len(c))
	}
	return tr
}

// repeat is a capacity row of n ticks of c.
func repeat(c, n int) []int {
	row := make([]int, n)
	for i := range row {
		row[i] = c
	}
	return row
}

func TestScore(t *testing.T) {
	rules := Rules{Target: 1, ColdStart: 2, Window: 6, ODRatio: 3}
	tests := []struct {
		name      string
		held      []int
		od        []int
		wantAvail float64
		wantCost  float64
	}{
		// Ready at t=2 (held 0..2); a loss at 3 costs a new cold start: not ready at 3, 4 or 5.
		{name: "loss restarts the cold start", held: []int{1, 1, 1, 0, 1, 1}, od: make([]int, 6), wantAvail: 25, wantCost: 100 * 3.0 / 12},
		{name: "nothing ready before D", held: []int{1, 1, 0, 0, 0, 0}, od: make([]int, 6), wantAvail: 0, wantCost: 0},
		{name: "on-demand counts at its ratio", held: make([]int, 6), od: []int{1, 1, 1, 1, 1, 1}, wantAvail: 100, wantCost: 100},
		{name: "replicas above the target earn nothing", held: []int{2, 2, 2, 2, 2, 2}, od: []int{1, 1, 1, 1, 1, 1}, wantAvail: 100, wantCost: 100 * 20.0 / 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Schedule{OnDemand: tt.od}
			for _, n := range tt.held {
				s.Held = append(s.Held, []int{n})
			}
			sc := score(s, rules)
			if !near(sc.AvailabilityPct, tt.wantAvail) || !near(sc.CostPct, tt.wantCost) {
				t.Errorf("score = %.2f%% available, %.2f%% cost; want %.2f%%, %.2f%%", sc.AvailabilityPct, sc.CostPct, tt.wantAvail, tt.wantCost)
			}
		})
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestBaselines replays each baseline on hand-made traces whose results were worked out by hand
// (the working is in each case's comment).
func TestBaselines(t *testing.T) {
	tests := []struct {
		name      string
		policy    string
		trace     *Trace
		rules     Rules
		wantAvail float64
		wantCost  float64
	}{
		// 3 on-demand all the time: 100 % by definition.
		{name: "on-demand", policy: "on-demand", trace: tinyTrace(repeat(9, 8)), rules: Rules{Target: 3, ColdStart: 2, Window: 7, ODRatio: 3}, wantAvail: 100, wantCost: 100},
		// Zone a is always full. Water-filling puts one in a and one in b every tick; a's is lost at
		// once, so b holds 1 and 2 are never ready. Cost: 1 per tick over ticks 1..4 = 4 of 2x3x4.
		{name: "even spread keeps trying the full zone", policy: "even-spread", trace: tinyTrace(repeat(0, 6), repeat(5, 6)), rules: Rules{Target: 2, ColdStart: 1, Window: 5, ODRatio: 3}, wantAvail: 0, wantCost: 100 * 4.0 / 24},
		// The cycle goes a,b | a | b: b holds 1,1,2,2,2 after the clamp; 2 ready at ticks 3 and 4
		// (2 of 4); cost 1+2+2+2 = 7 of 24.
		{name: "round robin moves on", policy: "round-robin", trace: tinyTrace(repeat(0, 6), repeat(5, 6)), rules: Rules{Target: 2, ColdStart: 1, Window: 5, ODRatio: 3}, wantAvail: 50, wantCost: 100 * 7.0 / 24},
		// E=1, three spot: t0 a,b,a (b holds 1); t1 b,a (b 2); t2 b (b 3); then b holds 3.
		// Ready (min over t-1..t): 1, 2, 3, 3 at ticks 1..4: 3 of 4; cost 2+3+3+3 = 11 of 24.
		{name: "round robin with a spare", policy: "round-robin:1", trace: tinyTrace(repeat(0, 6), repeat(5, 6)), rules: Rules{Target: 2, ColdStart: 1, Window: 5, ODRatio: 3},
			wantAvail: 75, wantCost: 100 * 11.0 / 24},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := evaluateOne(t, tt.trace, tt.rules, tt.policy)
			if !near(got.AvailabilityPct, tt.wantAvail) || !near(got.CostPct, tt.wantCost) {
				t.Errorf("%s: %.2f%% available, %.2f%% cost; want %.2f%%, %.2f%%", tt.policy, got.AvailabilityPct, got.CostPct, tt.wantAvail, tt.wantCost)
			}
		})
	}
}

// evaluateOne replays one policy on one window starting at tick 0.
func evaluateOne(t *testing.T, tr *Trace, rules Rules, policy string) Result {
	t.Helper()
	specs, err := ParsePolicies(policy)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Evaluate(context.Background(), tr, Config{Rules: rules, Offsets: []int{0}}, specs)
	if err != nil {
		t.Fatal(err)
	}
	return res[0]
}

// TestSpotHedgeHandWorked: three identical zones (so the random choices cannot change the
// outcome), N=1, E=1, D=1, capacity 1 except a tick with none.
//
//	t0: launch in two zones X,Y (active, empty first); on-demand 1 (nothing ready at t-1).
//	t1: got all: X,Y active. On-demand 1 (ready at t0 is 0: before D).
//	t2: asks X,Y again; the clamp takes both. Ready spot at t1 is 2: on-demand 0.
//	t3: X,Y preemptive; only Z is active (1 > min(1, 0)): both launches go to Z; the clamp keeps 1.
//	    Ready spot at t2 is 0: on-demand 1.
//	t4: Z got 1 of 2: preemptive; none active: all revive. One launch in X or Y; on-demand 1.
//	t5: ready spot at t4 is 1 (Z): on-demand min(1, 2-1) = 1.
//
// Held spot 2,2,0,1,2,2 and on-demand 1,1,0,1,1,1; ready >= 1 at ticks 1, 4, 5 of 1..5: 60 %.
// Cost over ticks 1..5: spot 7 + 3 x on-demand 4 = 19 of 1 x 3 x 5.
func TestSpotHedgeHandWorked(t *testing.T) {
	c := []int{1, 1, 0, 1, 1, 1, 1}
	got := evaluateOne(t, tinyTrace(c, c, c), Rules{Target: 1, Extra: 1, ColdStart: 1, Window: 6, ODRatio: 3}, "spothedge")
	if !near(got.AvailabilityPct, 60) || !near(got.CostPct, 100*19.0/15) {
		t.Errorf("spothedge: %.2f%% available, %.2f%% cost; want 60%%, %.2f%%", got.AvailabilityPct, got.CostPct, 100*19.0/15)
	}
}

func TestSpotHedgeZoneStates(t *testing.T) {
	tests := []struct {
		name       string
		preemptive []bool
		lastAsked  []int
		held       []int
		want       []bool
	}{
		{name: "a loss makes a zone preemptive", preemptive: []bool{false, false, false, false}, lastAsked: []int{2, 1, 1, 0}, held: []int{1, 1, 1, 0}, want: []bool{true, false, false, false}},
		{name: "getting all it asked makes a zone active", preemptive: []bool{true, true, false, false}, lastAsked: []int{1, 0, 0, 0}, held: []int{1, 0, 0, 0}, want: []bool{false, true, false, false}},
		{name: "asking nothing keeps the state", preemptive: []bool{true, false, false, false}, lastAsked: []int{0, 0, 4, 0}, held: []int{0, 0, 4, 0}, want: []bool{true, false, false, false}},
		// 4 zones: revive when at most one is active.
		{name: "one active zone of four revives all", preemptive: []bool{false, false, false, false}, lastAsked: []int{1, 1, 1, 1}, held: []int{0, 0, 0, 1}, want: []bool{false, false, false, false}},
		{name: "two active zones of four stay", preemptive: []bool{false, false, false, false}, lastAsked: []int{1, 1, 1, 1}, held: []int{0, 0, 1, 1}, want: []bool{true, true, false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &spotHedge{preemptive: tt.preemptive, lastAsked: tt.lastAsked}
			p.updateZones(tt.held)
			p.reviveIfFew()
			for z := range tt.want {
				if p.preemptive[z] != tt.want[z] {
					t.Fatalf("preemptive = %v, want %v", p.preemptive, tt.want)
				}
			}
		})
	}
}

// probe records what a policy is shown, to check it never sees the tick it decides.
type probe struct{ t *testing.T }

func (p probe) Decide(obs *Observation) Decision {
	if len(obs.Held) != obs.Tick || len(obs.Asked) != obs.Tick || len(obs.OnDemand) != obs.Tick {
		p.t.Fatalf("tick %d: shown %d ticks of history", obs.Tick, len(obs.Held))
	}
	return Decision{Spot: make([]int, len(obs.Zones)), OnDemand: 1}
}

func TestPoliciesSeeOnlyThePast(t *testing.T) {
	past := [][]int{{7}, {8}}
	s, err := simulate(probe{t}, Rules{Target: 1, ColdStart: 1, Window: 4, ODRatio: 3}, []string{"a"}, [][]int{{1}, {1}, {1}, {1}}, past)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Held) != 4 {
		t.Errorf("schedule has %d ticks, want 4", len(s.Held))
	}
}

func TestParsePolicies(t *testing.T) {
	tests := []struct {
		list    string
		want    []string
		wantErr string
	}{
		{list: "spothedge, optimal", want: []string{"spothedge", "optimal"}},
		{list: "even-spread:0,even-spread:1", want: []string{"even-spread:0", "even-spread:1"}},
		{list: "spothedge,skyserve", wantErr: `unknown policy "skyserve": choose from`},
		{list: "even-spread:x", wantErr: "must be a whole number"},
		{list: "optimal,optimal", wantErr: "listed twice"},
		{list: " , ", wantErr: "no policy given"},
	}
	for _, tt := range tests {
		t.Run(tt.list, func(t *testing.T) {
			specs, err := ParsePolicies(tt.list)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || len(specs) != len(tt.want) {
				t.Fatalf("ParsePolicies() = %v, %v; want %v", specs, err, tt.want)
			}
			for i := range specs {
				if specs[i].String() != tt.want[i] {
					t.Errorf("spec %d = %s, want %s", i, specs[i], tt.want[i])
				}
			}
		})
	}
}
