package anomalywatch

import (
	"testing"

	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/budget"
)

func TestSample(t *testing.T) {
	cfg := testConfig()
	policies := []budget.Policy{{Name: "aws", Scope: budget.Scope{Provider: "aws"}}, {Name: "gcp", Scope: budget.Scope{Provider: "gcp"}}}
	noPrice := arbiter.Burn{Workload: "llm", Team: "search", Provider: "aws", Location: "aws-use1", Market: "spot", Ready: 2}
	got := Sample(cfg, policies, []arbiter.Burn{spot, base, noPrice})
	key := SeriesKey(spot)
	tests := []struct {
		scope, series string
		wantUSD       float64
	}{
		{"workload=llm", key, 20},
		{"team=search", key, 20},
		{"budget=aws", SeriesKey(base), 15},
		{"workload=llm", "workload=llm,location=aws-use1,gpu_model=unknown,market=spot", 0},
	}
	for _, tc := range tests {
		if c, ok := got[tc.scope][tc.series]; !ok || c.USDPerHour != tc.wantUSD {
			t.Errorf("%s / %s = %+v (%v), want %.2f $/h", tc.scope, tc.series, c, ok, tc.wantUSD)
		}
	}
	if s, ok := got["budget=gcp"]; !ok || len(s) != 0 {
		t.Errorf("a budget that matches nothing running: %v (%v), want watched and empty", s, ok)
	}
	if c := got["workload=llm"][key]; c.GPUs != 32 {
		t.Errorf("GPUs %v, want 32", c.GPUs)
	}
}
