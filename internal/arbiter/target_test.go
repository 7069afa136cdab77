package arbiter

import (
	"testing"

	"github.com/bursar-dev/bursar/internal/fleet"
)

// A workload's serving.availability_target reaches the planner as a percent; a workload that
// states none plans without one (0), as before.
func TestWorkloadCarriesAvailabilityTarget(t *testing.T) {
	const src = `locations:
  - {name: a, provider: aws, region: r, zones: [a], actuator: {kind: sim}}
workloads:
  - name: with
    gpu: {models: [A10G], count: 1}
    replicas: {min: 1}
    cold_start: 2m
    serving: {availability_target: 99.9}
  - name: without
    gpu: {models: [A10G], count: 1}
    replicas: {min: 1}
    cold_start: 2m
`
	cfg, err := fleet.Parse([]byte(src), "target.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{99.9, 0} {
		if got := workload(&cfg.Workloads[i]).AvailabilityTarget; got != want {
			t.Errorf("%s: target %g, want %g", cfg.Workloads[i].Name, got, want)
		}
	}
}
