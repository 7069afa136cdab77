package arbiter_test

import (
	"context"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
)

// servingYAML is one serving workload sized in output tokens, on H100 or A100.
const servingYAML = `locations:
  - {name: a, provider: aws, region: us-east-1, zones: [us-east-1a], egress_per_gb: 0.09, actuator: {kind: sim, launch_delay: 30s}}
workloads:
  - name: svc
    gpu: {models: [H100-80GB, A100-80GB], count: 8}
    replicas: {min: 1}
    markets: [spot, on_demand]
    cold_start: 5m
    scaling: {metric: output_tokens_per_second}
    serving:
      per_replica: {H100-80GB: 829, A100-80GB: 172}
`

// TestDemandHistoryIsReadBackAtStart: two days of token samples with a morning rise are on the
// bus before the arbiter starts; reading them back, it sizes the workload for the day's level a
// cold start before the third morning's rise, while the current rate is still the night's, and an
// arbiter started after it sizes it the same. (The samples are all published now, so this shows
// the read-back, not how far DemandLookback reaches: the server stamps them with its own time.)
func TestDemandHistoryIsReadBackAtStart(t *testing.T) {
	h := newHarness(t, servingYAML)
	day0 := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	prerise := day0.Add(2*24*time.Hour + 7*time.Hour + 57*time.Minute)
	var gen int64
	for at := day0; !at.After(prerise); at = at.Add(time.Minute) {
		e := &events.TokensSample{Meta: events.Meta{At: at}, Location: "a", Workload: "svc", Replica: "r1", Server: "vllm",
			GenerationTokens: gen}
		if _, err := h.pub.PublishAsync(e); err != nil {
			t.Fatal(err)
		}
		rate := int64(100)
		if hr := at.Hour(); hr >= 8 && hr < 20 {
			rate = 500
		}
		gen += rate * 60
	}
	if err := h.pub.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(prerise.Sub(h.clock.Now()))
	var sized [2]float64
	for i, id := range []string{"first", "second"} {
		r := h.start(id, nil)
		eventually(t, id+" leads (it follows every input by then)", r.Leading)
		if err := r.AwaitFolded(context.Background()); err != nil {
			t.Fatal(err)
		}
		sized[i] = r.SizingRate("svc")
		r.cancel() // the harness's cleanup waits for it to end
	}
	if sized[0] < 450 || sized[1] != sized[0] {
		t.Errorf("sized for %.0f and, after a restart, %.0f output tokens/s at 07:57 (night 100, day 500): want the day's level both times",
			sized[0], sized[1])
	}
}
