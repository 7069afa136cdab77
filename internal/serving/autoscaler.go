package serving

import "math"

// SkyServe's request-rate autoscaler (skypilot-org/skypilot, sky/serve/autoscalers.py,
// RequestRateAutoscaler and _AutoscalerWithHysteresis; docs/source/serving/autoscaling.rst):
//
//	target = ceil(requests/s over the last AUTOSCALER_QPS_WINDOW_SIZE_SECONDS = 60 s
//	              / target_qps_per_replica), clipped to [min_replicas, max_replicas];
//	scale up only after the target has been above the current one for
//	_UPSCALE_DELAY_S = 300 s, down only after it has been below for _DOWNSCALE_DELAY_S = 1200 s.
//
// The source counts the delays in consecutive decisions: scale_up_threshold = delay / decision
// interval, a counter that grows while the new target stays above (or below) the current one and
// resets when it does not; "faster scale up when there is no replica" sets the target at once
// while it is 0. Here one decision is made per 60 s tick, so the thresholds are 300/60 = 5 and
// 1200/60 = 20 ticks. Demand is in output tokens/s, the per-replica rate the profile's.
const (
	upscaleDelaySeconds   = 300
	downscaleDelaySeconds = 1200
	tickSeconds           = 60
)

// autoscaler is one service's request-rate autoscaler with hysteresis.
type autoscaler struct {
	perReplica float64 // target_qps_per_replica: the replica's tokens/s at the latency target
	min, max   int     // min_replicas, max_replicas
	target     int     // target_num_replicas; 0 until the first decision with a rate
	up, down   int     // upscale_counter, downscale_counter
}

// newAutoscaler is the benchmark's service spec: min_replicas 1 and no max_replicas. The
// service starts with no replica (target 0), so its first decision with a rate uses SkyServe's
// "faster scale up when there is no replica".
func newAutoscaler(perReplica float64) *autoscaler {
	return &autoscaler{perReplica: perReplica, min: 1, max: math.MaxInt32}
}

// decide updates the target from what obs saw in the last tick and returns it. At tick 0 there is
// no rate yet and the target stays 0.
func (a *autoscaler) decide(obs *Observation) int {
	if obs.Tick == 0 {
		return a.target
	}
	want := min(a.max, max(a.min, int(math.Ceil(obs.Demand[obs.Tick-1]/a.perReplica))))
	switch {
	case a.target == 0:
		a.target = want
	case want > a.target:
		a.up++
		a.down = 0
		if a.up >= upscaleDelaySeconds/tickSeconds {
			a.up, a.target = 0, want
		}
	case want < a.target:
		a.down++
		a.up = 0
		if a.down >= downscaleDelaySeconds/tickSeconds {
			a.down, a.target = 0, want
		}
	default:
		a.up, a.down = 0, 0
	}
	return a.target
}
