package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/fleet"
)

func TestFleet(t *testing.T) {
	st := history(t)
	// A pending hold to launch one more at aws-use1, and one at a location where nothing runs.
	seed(t, st, "plan_decided", "id, at, version, workload, plan_id, actions, usd_per_hour_before, usd_per_hour_after, needs_approval",
		planRow("h1", "11:30", "chat", 13, 18, true, "b1 launch aws-use1 "+awsSpot+" spot 1 demand_up true",
			"b2 launch aws-usw2 "+chatUSW2+" on_demand 2 demand_up true"))
	seed(t, st, "action_updated", "id, at, version, workload, action_id, plan_id, status, kind, location, offer, market, "+
		"replicas, reason, actor, detail",
		stepRow(1, "11:30", "chat", "h1", "b1", "awaiting_approval", "launch", "aws-use1", awsSpot, "demand_up", "bursar", ""))
	o := opts("09:00", "12:00")
	o.Fleet = testFleet()
	o.Fleet.Workloads[0].Scaling.Metric = fleet.MetricTokens
	o.Fleet.Workloads[0].Serving.PerReplica = map[string]float64{"H100-80GB": 500}
	res, err := Fleet(ctxT(t), st, o)
	if err != nil {
		t.Fatal(err)
	}
	// aws: the state reported at 10:30, 2 replicas at $5; gcp: at 11:00, 1 at $3. Capacity:
	// 2 x 500 on H100s, none stated for A100s.
	want := []string{
		"chat aws-use1 aws H100-80GB spot ready=2 desired=2 launching=0 draining=0 pending=1 usd_per_hour=10 capacity=1000",
		"chat aws-usw2 aws unknown on_demand ready=0 desired=0 launching=0 draining=0 pending=2 usd_per_hour=0 capacity=<nil>",
		"chat gcp-usc1 gcp A100-80GB on_demand ready=1 desired=1 launching=0 draining=0 pending=0 usd_per_hour=3 capacity=<nil>",
	}
	var got []string
	for _, r := range res.Rows {
		got = append(got, fmt.Sprintf("%s %s %s %s %s ready=%v desired=%v launching=%v draining=%v pending=%v usd_per_hour=%v capacity=%v",
			r["workload"], r["location"], r["provider"], r["gpu"], r["market"], r["ready"], r["desired"], r["launching"],
			r["draining"], r["pending_approval"], r["usd_per_hour"], r["capacity_per_s"]))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Its cost per million tokens is tokens --by workload,location,gpu,market over the window,
	// its demand the same report's tokens over the last hour.
	by := []Dim{Workload, Location, GPU, Market}
	whole, err := Tokens(ctxT(t), st, TokenOptions{Options: Options{Window: o.Window, By: by, Now: o.Now, Fleet: o.Fleet}})
	if err != nil {
		t.Fatal(err)
	}
	last, err := Tokens(ctxT(t), st, TokenOptions{Options: Options{Window: Window{at("11:00"), at("12:00")}, By: by, Now: o.Now, Fleet: o.Fleet}})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, r := range res.Rows {
		for _, w := range whole.Rows {
			if sameGroup(r, w) {
				checked++
				if r["usd_per_m_tokens"] != w["usd_per_m_tokens"] {
					t.Errorf("%s %s: fleet $%v/Mtok, tokens $%v", r["location"], r["gpu"], r["usd_per_m_tokens"], w["usd_per_m_tokens"])
				}
			}
		}
		for _, w := range last.Rows {
			if sameGroup(r, w) {
				checked++
				if want := round(float64(w["tokens"].(int64))/3600, 2); r["demand_per_s"] != want || r["unit"] != "tokens/s" {
					t.Errorf("%s %s: demand %v %v, tokens report %v tokens/s", r["location"], r["gpu"], r["demand_per_s"], r["unit"], want)
				}
			}
		}
	}
	if checked != 4 {
		t.Errorf("%d figures compared with the tokens report, want 4 (both groups, both windows)", checked)
	}
	// Demand is counted in the unit of the workload's scaling metric, the unit its rates are in.
	for metric, col := range map[string]string{fleet.MetricRequests: "requests", fleet.MetricOutputTokens: "generation_tokens"} {
		o.Fleet.Workloads[0].Scaling.Metric = metric
		res, err := Fleet(ctxT(t), st, o)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range res.Rows {
			for _, w := range last.Rows {
				if sameGroup(r, w) {
					n++
					if want := round(float64(w[col].(int64))/3600, 2); r["demand_per_s"] != want {
						t.Errorf("%s, %s %s: demand %v %v, tokens report %v %s/s", metric, r["location"], r["gpu"], r["demand_per_s"], r["unit"], want, col)
					}
				}
			}
		}
		if n != 2 {
			t.Errorf("%s: %d demands compared, want 2", metric, n)
		}
	}
}

func sameGroup(a, b map[string]any) bool {
	for _, c := range []string{"workload", "location", "gpu", "market"} {
		if a[c] != b[c] {
			return false
		}
	}
	return true
}

// TestFleetFiltersAndEnd: the fleet at an earlier end is the state then, and filters keep rows.
func TestFleetFiltersAndEnd(t *testing.T) {
	st := history(t)
	tests := []struct {
		name   string
		o      Options
		filter Filter
		want   string
	}{
		{"before gcp started", opts("08:00", "09:00"), nil, ""},
		{"gcp only", opts("09:00", "12:00"), Filter{Provider: {"gcp"}}, "gcp-usc1/A100-80GB"},
		{"by gpu", opts("09:00", "12:00"), Filter{GPU: {"H100-80GB"}}, "aws-use1/H100-80GB"},
		{"by region", opts("09:00", "12:00"), Filter{Region: {"us-central1"}}, "gcp-usc1/A100-80GB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.o
			o.Filter, o.Fleet = tt.filter, &fleet.Config{Locations: testFleet().Locations}
			res, err := Fleet(ctxT(t), st, o)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range res.Rows {
				got = append(got, fmt.Sprintf("%s/%s", r["location"], r["gpu"]))
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("rows %q, want %q", strings.Join(got, " "), tt.want)
			}
		})
	}
}
