package anomaly

import (
	"reflect"
	"testing"
)

// TestNewChildExplainsTheRise: a child first seen in a scope with history spent nothing there
// before, so it expects 0 and explains the rise it makes, from the step that opens the anomaly to
// its later updates; a child known from the start is judged against its own baseline.
func TestNewChildExplainsTheRise(t *testing.T) {
	tests := []struct {
		name          string
		before, after map[string]Child
		want          []Contribution // the explanation of the anomaly's opening and of its last update
	}{
		{
			name:   "on-demand fallback to a market never used",
			before: map[string]Child{"w/a/spot": {10, 10}},
			after:  map[string]Child{"w/a/spot": {0, 0}, "w/a/on_demand": {30, 10}},
			want:   []Contribution{{"w/a/on_demand", 0, 30}, {"w/a/spot", 10, 0}},
		},
		{
			name:   "a new child beside an unchanged one",
			before: map[string]Child{"w/a/spot": {10, 10}},
			after:  map[string]Child{"w/a/spot": {10, 10}, "w/b/spot": {20, 20}},
			want:   []Contribution{{"w/b/spot", 0, 20}},
		},
		{
			name:   "a known child that rises",
			before: map[string]Child{"w/a/spot": {10, 10}, "w/b/spot": {2, 2}},
			after:  map[string]Child{"w/a/spot": {10, 10}, "w/b/spot": {20, 20}},
			want:   []Contribution{{"w/b/spot", 2, 20}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			sc := NewScope("w", cfg)
			at := epoch
			for range int(cfg.Learn/cfg.Step) + 12 {
				if ev := sc.Observe(at, tt.before); len(ev) > 0 {
					t.Fatalf("an anomaly on the steady stretch: %+v", ev)
				}
				at = at.Add(cfg.Step)
			}
			var opened, last *Anomaly
			for range 18 { // an hour and a half: past the new child's first hour, the anomaly held out of it
				for _, e := range sc.Observe(at, tt.after) {
					if e.Anomaly.Series != "w" {
						continue // the unit price's: its own test
					}
					a := e.Anomaly
					if e.Change == Opened {
						opened = &a
					}
					last = &a
				}
				at = at.Add(cfg.Step)
			}
			if opened == nil {
				t.Fatal("no anomaly opened on the scope's total")
			}
			if !reflect.DeepEqual(opened.Explanation, tt.want) {
				t.Errorf("opened with explanation %+v, want %+v", opened.Explanation, tt.want)
			}
			if !reflect.DeepEqual(last.Explanation, tt.want) {
				t.Errorf("last update's explanation %+v, want %+v", last.Explanation, tt.want)
			}
		})
	}
}

func TestMovedNamesTheChildDimensions(t *testing.T) {
	kids := []Contribution{
		{Series: "workload=llm,location=aws-use1,gpu_model=H100,market=on_demand"},
		{Series: "workload=llm,location=aws-use2,gpu_model=H100,market=spot"},
	}
	dims := []string{"location=aws-use1,gpu_model=H100,market=on_demand", "location=aws-use2,gpu_model=H100,market=spot"}
	tests := []struct {
		name   string
		series string
		kids   []Contribution
		want   []string
	}{
		{"a scope's total", "workload=llm", kids, dims},
		{"a scope's unit price", "workload=llm" + UnitPriceSuffix, kids, dims},
		{"a team's", "team=search", kids[:1], []string{kids[0].Series}},
		{"plain keys", "w", []Contribution{{Series: "w/a/spot"}}, []string{"w/a/spot"}},
		{"plain keys, unit price", "w" + UnitPriceSuffix, []Contribution{{Series: "w/a/spot"}}, []string{"w/a/spot"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := Anomaly{Series: tt.series, Explanation: tt.kids}
			if got := a.Moved(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Moved = %v, want %v", got, tt.want)
			}
		})
	}
	a := Anomaly{Series: "workload=llm", Start: epoch}
	if a.ID() != "workload=llm@2025-01-06T00:00:00Z" {
		t.Errorf("ID = %q", a.ID())
	}
}
