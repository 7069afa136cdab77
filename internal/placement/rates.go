package placement

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// rated says whether w is planned by rate (Workload.Throughput) rather than in replicas.
func rated(w *Workload) bool { return len(w.Throughput) > 0 }

// modelRate is what one replica of w on a GPU of that model serves, 0 when the model has no
// usable rate (absent, not positive, or not finite): such offers do not qualify.
func modelRate(w *Workload, model string) float64 {
	r := w.Throughput[model]
	if !(r > 0) || math.IsInf(r, 1) {
		return 0
	}
	return r
}

// demandRate is the rate w needs, 0 when DemandRate is not a finite non-negative number
// (CheckRates says so, and the plan's explanation repeats it).
func demandRate(w *Workload) float64 {
	r := w.DemandRate
	if !(r >= 0) || math.IsInf(r, 1) {
		return 0
	}
	return r
}

// rateCounts are the replica bounds of a workload planned by rate: at least MinReplicas and
// enough replicas to span MinLocations (an outcome of the plan cannot be asked to span more
// locations than it has replicas), at most MaxReplicas and the planner's limit.
func rateCounts(w *Workload) (lo, hi int) {
	hi = MaxReplicas
	if w.MaxReplicas > 0 {
		hi = min(hi, w.MaxReplicas)
	}
	return min(max(w.MinReplicas, w.MinLocations, 0), hi), hi
}

// rateGuess is how many replicas w likely needs, at its slowest accepted model: it sizes the
// candidate list before the fill knows the answer.
func rateGuess(w *Workload) int {
	lo, hi := rateCounts(w)
	slow := math.Inf(1)
	for m := range w.Throughput {
		if r := modelRate(w, m); r > 0 {
			slow = min(slow, r)
		}
	}
	n := lo
	if need := demandRate(w); need > 0 && !math.IsInf(slow, 1) {
		n = max(n, int(min(math.Ceil(need/slow), float64(hi))))
	}
	return min(n, hi)
}

// rateSlack is how far below a rate a sum may fall and still count as reaching it: sums of
// floating-point rates drift by a few ulps.
func rateSlack(rate float64) float64 { return 1e-9 * max(1, math.Abs(rate)) }

// CheckRates says what is wrong with w's rates, nil when nothing is: a demand rate or a
// throughput that is negative, not a number or infinite; a demand rate without throughput; or,
// when w lists its GPU models, one it accepts without a rate (its offers would not qualify).
// The planner does not refuse such a workload: it plans with what is usable and explains.
func (w *Workload) CheckRates() error {
	if !rated(w) {
		if w.DemandRate != 0 {
			return fmt.Errorf("workload %s: demand rate %v given without a throughput per GPU model", w.ID, w.DemandRate)
		}
		return nil
	}
	if r := w.DemandRate; !(r >= 0) || math.IsInf(r, 1) {
		return fmt.Errorf("workload %s: demand rate %v is not a finite number >= 0", w.ID, r)
	}
	models := make([]string, 0, len(w.Throughput))
	for m := range w.Throughput {
		models = append(models, m)
	}
	slices.Sort(models)
	for _, m := range models {
		if m == "" {
			return fmt.Errorf("workload %s: a throughput is given for an empty GPU model", w.ID)
		}
		if r := w.Throughput[m]; modelRate(w, m) == 0 {
			return fmt.Errorf("workload %s: throughput %v on %s is not a finite number > 0", w.ID, r, m)
		}
	}
	for _, m := range w.GPUModels {
		if _, ok := w.Throughput[m]; !ok {
			return fmt.Errorf("workload %s: accepts %s but gives no throughput for it, so its offers do not qualify", w.ID, m)
		}
	}
	return nil
}

// formatRate writes a rate for a person: whole units with thousands separators from 100 up,
// three significant digits below, and the workload's unit.
func formatRate(v float64, unit string) string {
	if unit == "" {
		unit = "units/s"
	}
	if math.Abs(v) < 100 || math.IsInf(v, 0) || math.IsNaN(v) {
		return strconv.FormatFloat(v, 'g', 3, 64) + " " + unit
	}
	digits := strconv.FormatFloat(math.Round(math.Abs(v)), 'f', 0, 64)
	var b strings.Builder
	if v < 0 {
		b.WriteByte('-')
	}
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String() + " " + unit
}
