package fleet

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/pricing"
)

// Serving states what one replica of a serving workload serves at its latency target, per GPU
// model it accepts, so the planner can compare GPU types by cost per token rather than per
// replica:
//
//	scaling: {metric: tokens_per_second}
//	serving:
//	  target: {ttft: 2s, tpot: 50ms}
//	  per_replica: {A100-80GB: 172, H100-80GB: 829}
//	  availability_target: 99.9
type Serving struct {
	// Target is the latency target the rates were measured at; it documents them (a rate means
	// nothing without it) and is reported beside the cost per token.
	Target LatencyTarget `yaml:"target"`
	// PerReplica is what one replica serves on each GPU model, in the scaling metric's unit
	// (tokens or requests per second). A workload that accepts one model may give its rate in
	// scaling.per_replica instead.
	PerReplica map[string]float64 `yaml:"per_replica"`
	// AvailabilityTarget is the percent of minutes the workload must have enough ready
	// capacity for its demand, in (0, 100]; nil when not stated.
	AvailabilityTarget *float64 `yaml:"availability_target"`
}

// LatencyTarget is the time to first token and time per output token a rate holds at.
type LatencyTarget struct {
	TTFT time.Duration `yaml:"ttft"`
	TPOT time.Duration `yaml:"tpot"`
}

func (s *Serving) isZero() bool {
	return s.Target == (LatencyTarget{}) && s.PerReplica == nil && s.AvailabilityTarget == nil
}

// SizedByThroughput says whether w's demand is read in tokens or requests per second, the
// metrics a rate per GPU model applies to (gpu_utilization is a percent per replica, the same
// on any model).
func (w *Workload) SizedByThroughput() bool {
	switch w.Scaling.Metric {
	case MetricTokens, MetricOutputTokens, MetricRequests:
		return true
	}
	return false
}

// Rates is what one replica serves on each GPU model w accepts, in the scaling metric's unit:
// serving.per_replica, or, for a workload that gives one rate in scaling.per_replica, that rate
// for each model it accepts. Nil for a workload not sized by throughput. The map is a copy.
func (w *Workload) Rates() map[string]float64 {
	if !w.SizedByThroughput() {
		return nil
	}
	if len(w.Serving.PerReplica) > 0 {
		return maps.Clone(w.Serving.PerReplica)
	}
	if w.Scaling.PerReplica <= 0 {
		return nil
	}
	out := map[string]float64{}
	for _, m := range w.acceptedModels() {
		out[m] = w.Scaling.PerReplica
	}
	return out
}

// RateFor is what one replica of w serves on GPU model, in the scaling metric's unit; false when
// w states no rate for it (it does not accept the model, or is not sized by throughput). A
// workload with one rate in scaling.per_replica serves it on any model it runs on.
func (w *Workload) RateFor(model string) (float64, bool) {
	if !w.SizedByThroughput() {
		return 0, false
	}
	if len(w.Serving.PerReplica) > 0 {
		r, ok := w.Serving.PerReplica[model]
		return r, ok
	}
	return w.Scaling.PerReplica, w.Scaling.PerReplica > 0
}

// AvailabilityTarget is the percent of minutes w must have enough capacity, and whether it
// states one.
func (w *Workload) AvailabilityTarget() (float64, bool) {
	if w.Serving.AvailabilityTarget == nil {
		return 0, false
	}
	return *w.Serving.AvailabilityTarget, true
}

// acceptedModels are the GPU models w may run on: gpu.models, or every known model with at least
// gpu.min_memory_gb per GPU.
func (w *Workload) acceptedModels() []string {
	if len(w.GPU.Models) > 0 {
		return w.GPU.Models
	}
	var out []string
	for _, g := range pricing.GPUs() {
		if float64(g.MemoryGB) >= w.GPU.MinMemoryGB {
			out = append(out, g.Name)
		}
	}
	return out
}

// checkServing checks the serving block against the workload's GPUs and scaling metric: a
// workload sized in tokens or requests that may run on several models needs a rate for each,
// since one rate for all would rank an H100 against an A100 by price per replica alone.
func (w *Workload) checkServing(at func(...any) []any) error {
	s := &w.Serving
	if err := s.checkTarget(at); err != nil {
		return err
	}
	if len(s.PerReplica) > 0 {
		if err := w.checkRates(at); err != nil {
			return err
		}
	}
	if !w.SizedByThroughput() || w.Scaling.PerReplica > 0 && len(s.PerReplica) == 0 && len(w.acceptedModels()) == 1 {
		return nil
	}
	for _, m := range w.acceptedModels() {
		if _, ok := s.PerReplica[m]; !ok {
			return w.missingRate(m, at)
		}
	}
	return nil
}

func (s *Serving) checkTarget(at func(...any) []any) error {
	switch {
	case s.Target.TTFT < 0:
		return fail("want a duration of 0 (not stated) or more", at("serving", "target", "ttft")...)
	case s.Target.TPOT < 0:
		return fail("want a duration of 0 (not stated) or more", at("serving", "target", "tpot")...)
	case s.AvailabilityTarget != nil && !(*s.AvailabilityTarget > 0 && *s.AvailabilityTarget <= 100):
		return fail(fmt.Sprintf("want a percent of minutes above 0 and at most 100 (e.g. 99.9), not %g", *s.AvailabilityTarget),
			at("serving", "availability_target")...)
	}
	return nil
}

// checkRates checks serving.per_replica: a metric that gives the rates a unit, not a second rate
// in scaling.per_replica, and positive rates for accepted models only.
func (w *Workload) checkRates(at func(...any) []any) error {
	switch {
	case w.Scaling.Metric == "":
		return fail(fmt.Sprintf("rates need a unit: set scaling.metric to %s, %s or %s", MetricTokens, MetricOutputTokens, MetricRequests),
			at("serving", "per_replica")...)
	case !w.SizedByThroughput():
		return fail(fmt.Sprintf("rates per GPU model apply to %s, %s or %s; a %s workload keeps its target in scaling.per_replica",
			MetricTokens, MetricOutputTokens, MetricRequests, w.Scaling.Metric), at("serving", "per_replica")...)
	case w.Scaling.PerReplica != 0:
		return fail("give the rate per model in serving.per_replica or one rate here (one model only), not both",
			at("scaling", "per_replica")...)
	}
	accepted := w.acceptedModels()
	for _, m := range slices.Sorted(maps.Keys(w.Serving.PerReplica)) {
		r := w.Serving.PerReplica[m]
		switch {
		case !slices.Contains(accepted, m):
			return fail(fmt.Sprintf("the workload does not run on %s (%s); remove its rate or accept the model in gpu", m, w.accepts()),
				at("serving", "per_replica", m)...)
		case !(r > 0) || math.IsInf(r, 1):
			return fail(fmt.Sprintf("want what one replica on %s serves in %s, more than 0", m, w.Scaling.Metric),
				at("serving", "per_replica", m)...)
		}
	}
	return nil
}

// missingRate is the error for an accepted model without a rate, at the rates when given, else at
// the single rate that cannot serve for several models, else at the metric.
func (w *Workload) missingRate(model string, at func(...any) []any) error {
	msg := fmt.Sprintf("no rate for %s, which the workload accepts (%s): give what one replica serves on each model in serving.per_replica, e.g. {%s}",
		model, w.accepts(), example(w.acceptedModels()))
	switch {
	case len(w.Serving.PerReplica) > 0:
		return fail(msg, at("serving", "per_replica")...)
	case w.Scaling.PerReplica != 0:
		return fail(msg+"; scaling.per_replica is a shorthand for a workload on one model", at("scaling", "per_replica")...)
	}
	return fail(msg, at("scaling", "metric")...)
}

// accepts says in words which models w accepts.
func (w *Workload) accepts() string {
	if len(w.GPU.Models) > 0 {
		return "gpu.models: " + strings.Join(w.GPU.Models, ", ")
	}
	return fmt.Sprintf("any GPU with at least %g GB; list gpu.models to narrow it", w.GPU.MinMemoryGB)
}

func example(models []string) string {
	var parts []string
	for _, m := range models[:min(len(models), 3)] {
		parts = append(parts, m+": …")
	}
	if len(models) > 3 {
		parts = append(parts, "…")
	}
	return strings.Join(parts, ", ")
}

// fillReplicaRate gives scaling.per_replica, where rates are per model, the lowest of them: code
// that sizes demand in replicas of one rate then sizes for the slowest model it may get, never
// short.
func (w *Workload) fillReplicaRate() {
	if w.Scaling.PerReplica == 0 && len(w.Serving.PerReplica) > 0 {
		w.Scaling.PerReplica = slices.Min(slices.Collect(maps.Values(w.Serving.PerReplica)))
	}
}
