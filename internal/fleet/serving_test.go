package fleet_test

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/fleet"
)

// twoModels is base's workload on two GPU models, sized in tokens, with a rate for each.
var twoModels = strings.Replace(base, "{models: [H100-80GB], count: 1}", "{models: [A100-80GB, H100-80GB], count: 1}", 1) +
	`    scaling: {metric: tokens_per_second}
    serving:
      target: {ttft: 2s, tpot: 50ms}
      per_replica:
        A100-80GB: 172
        H100-80GB: 829
      availability_target: 99.9
`

func TestServingRatesAreRead(t *testing.T) {
	cfg, err := fleet.Parse([]byte(twoModels), "bursar.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w := &cfg.Workloads[0]
	if got, want := w.Rates(), map[string]float64{"A100-80GB": 172, "H100-80GB": 829}; !maps.Equal(got, want) {
		t.Errorf("Rates() = %v, want %v", got, want)
	}
	if r, ok := w.RateFor("H100-80GB"); !ok || r != 829 {
		t.Errorf("RateFor(H100-80GB) = %v, %v, want 829, true", r, ok)
	}
	if _, ok := w.RateFor("L4"); ok {
		t.Error("RateFor(L4) found a rate for a model the workload does not accept")
	}
	if a, ok := w.AvailabilityTarget(); !ok || a != 99.9 {
		t.Errorf("AvailabilityTarget() = %v, %v, want 99.9, true", a, ok)
	}
	if w.Serving.Target.TPOT.Milliseconds() != 50 || w.Serving.Target.TTFT.Seconds() != 2 {
		t.Errorf("target = %+v", w.Serving.Target)
	}
	// Code that sizes in replicas of one rate sizes for the slowest model.
	if w.Scaling.PerReplica != 172 {
		t.Errorf("scaling.per_replica = %v, want the lowest rate, 172", w.Scaling.PerReplica)
	}
	w.Rates()["A100-80GB"] = 1
	if r, _ := w.RateFor("A100-80GB"); r != 172 {
		t.Error("Rates() returned the workload's own map")
	}
}

// TestOneModelShorthand: a workload on one model keeps giving its rate in scaling.per_replica.
func TestOneModelShorthand(t *testing.T) {
	cfg, err := fleet.Parse([]byte(base+"    scaling: {metric: requests_per_second, per_replica: 4}\n"), "bursar.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w := &cfg.Workloads[0]
	if got := w.Rates(); !maps.Equal(got, map[string]float64{"H100-80GB": 4}) {
		t.Errorf("Rates() = %v", got)
	}
	if _, ok := w.AvailabilityTarget(); ok {
		t.Error("an availability target nobody stated")
	}
	byMemory := strings.Replace(base, "{models: [H100-80GB], count: 1}", "{min_memory_gb: 190, count: 1}", 1) +
		"    scaling: {metric: tokens_per_second, per_replica: 900}\n    serving: {target: {tpot: 40ms}, availability_target: 99}\n"
	cfg, err = fleet.Parse([]byte(byMemory), "bursar.yaml")
	if err != nil {
		t.Fatalf("one model by memory with one rate and a target: %v", err)
	}
	if got := cfg.Workloads[0].Rates(); !maps.Equal(got, map[string]float64{"MI300X": 900}) {
		t.Errorf("Rates() = %v, want the one model with 190 GB, MI300X", got)
	}
	util, err := fleet.Parse([]byte(base+"    scaling: {metric: gpu_utilization, per_replica: 70}\n"), "bursar.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if r := util.Workloads[0].Rates(); r != nil {
		t.Errorf("a gpu_utilization workload has rates %v", r)
	}
}

func TestServingRefusals(t *testing.T) {
	oneRate := strings.Replace(twoModels, "      per_replica:\n        A100-80GB: 172\n        H100-80GB: 829\n", "", 1)
	tests := []struct {
		name     string
		yaml     string
		wantLine int
		want     string
	}{
		{"a rate missing", strings.Replace(twoModels, "        A100-80GB: 172\n", "", 1), 13,
			"field workloads[0].serving.per_replica: no rate for A100-80GB, which the workload accepts (gpu.models: A100-80GB, H100-80GB)"},
		{"one rate for two models", strings.Replace(oneRate, "{metric: tokens_per_second}", "{metric: tokens_per_second, per_replica: 500}", 1), 10,
			"field workloads[0].scaling.per_replica: no rate for A100-80GB"},
		{"no rate at all", oneRate, 10, "field workloads[0].scaling.metric: no rate for A100-80GB"},
		{"any model by memory", strings.Replace(twoModels, "{models: [A100-80GB, H100-80GB], count: 1}", "{min_memory_gb: 80, count: 1}", 1), 13,
			"any GPU with at least 80 GB; list gpu.models to narrow it"},
		{"a model not accepted", strings.Replace(twoModels, "        H100-80GB: 829\n", "        H100-80GB: 829\n        L4: 90\n", 1), 16,
			"field workloads[0].serving.per_replica.L4: the workload does not run on L4"},
		{"zero rate", strings.Replace(twoModels, "A100-80GB: 172", "A100-80GB: 0", 1), 14,
			"field workloads[0].serving.per_replica.A100-80GB: want what one replica on A100-80GB serves in tokens_per_second, more than 0"},
		{"negative rate", strings.Replace(twoModels, "H100-80GB: 829", "H100-80GB: -829", 1), 15, "more than 0"},
		{"both rates", strings.Replace(twoModels, "{metric: tokens_per_second}", "{metric: tokens_per_second, per_replica: 500}", 1), 10,
			"field workloads[0].scaling.per_replica: give the rate per model in serving.per_replica or one rate here"},
		{"rates without a metric", strings.Replace(twoModels, "    scaling: {metric: tokens_per_second}\n", "", 1), 12,
			"field workloads[0].serving.per_replica: rates need a unit"},
		{"rates on utilization", strings.Replace(twoModels, "{metric: tokens_per_second}", "{metric: gpu_utilization, per_replica: 70}", 1), 13,
			"a gpu_utilization workload keeps its target in scaling.per_replica"},
		{"availability zero", strings.Replace(twoModels, "99.9", "0", 1), 16, "field workloads[0].serving.availability_target: want a percent"},
		{"availability over 100", strings.Replace(twoModels, "99.9", "100.1", 1), 16, "not 100.1"},
		{"negative tpot", strings.Replace(twoModels, "tpot: 50ms", "tpot: -50ms", 1), 12, "field workloads[0].serving.target.tpot"},
		{"unknown field", strings.Replace(twoModels, "availability_target", "availability", 1), 16, `unknown field "availability" in a serving`},
		{"rate on a job", jobBase + "    serving: {availability_target: 99}\n", 0, "a job serves no traffic; remove serving:"},
		{"utilization over 100", base + "    scaling: {metric: gpu_utilization, per_replica: 170}\n", 10, "at most 100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fleet.Parse([]byte(tt.yaml), "bursar.yaml")
			var fe *fleet.Error
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want a *fleet.Error", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q, want it to contain %q", err, tt.want)
			}
			if tt.wantLine > 0 && fe.Line != tt.wantLine {
				t.Errorf("line = %d, want %d (%v)", fe.Line, tt.wantLine, err)
			}
		})
	}
}
