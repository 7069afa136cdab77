// Package benchmark measures the anomaly detectors on cost series from replays of the shared
// traces (internal/costseries) with anomalies injected from a seeded plan (anomaly.Plan):
// time-to-detect, precision, recall and false alerts per 100 series-weeks, per detector. Each
// workload's total is one series; docs/anomalies.md gives the rules and the figures.
package benchmark

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bursar-dev/bursar/internal/anomaly"
	"github.com/bursar-dev/bursar/internal/costseries"
)

// Workloads groups series into workloads (one per replay), leaves in the series' order.
func Workloads(ss []costseries.Series) []*anomaly.Workload {
	var out []*anomaly.Workload
	index := map[string]*anomaly.Workload{}
	for _, s := range ss {
		w, ok := index[s.Key.Workload]
		if !ok {
			w = &anomaly.Workload{Name: s.Key.Workload, Start: s.Start, Step: costseries.Step}
			index[s.Key.Workload] = w
			out = append(out, w)
		}
		w.Leaves = append(w.Leaves, anomaly.Leaf{Series: s.Key.String(), Location: s.Key.Location,
			OnDemand: s.Key.Market == costseries.OnDemand, USDPerHour: s.USDPerHour, GPUs: s.GPUs, Tokens: s.Tokens})
	}
	return out
}

// Tuning says whether a workload is in the tuning half (AWS1 and the m-large ServeGen trace);
// the figures reported are on the other half (AWS2, m-mid).
func Tuning(w *anomaly.Workload) bool {
	return strings.HasPrefix(w.Name, "aws1-") || strings.HasPrefix(w.Name, "m-large-")
}

// Detector builds a detector for one workload.
type Detector struct {
	Name string
	// Run returns the anomalies raised on the workload, its total or its leaves as it likes.
	Run func(w *anomaly.Workload) []anomaly.Anomaly
}

// Detectors are the compared detectors: Bursar's with cfg, the OpenCost proposal's rule (both of
// its algorithms) and the daily batch.
func Detectors(cfg anomaly.Config) []Detector {
	onTotal := func(build func(key string) anomaly.Detector) func(w *anomaly.Workload) []anomaly.Anomaly {
		return func(w *anomaly.Workload) []anomaly.Anomaly { return anomaly.Run(build(w.Name), w.Total()) }
	}
	return []Detector{
		{"bursar", func(w *anomaly.Workload) []anomaly.Anomaly { return runScope(w, cfg) }},
		{"opencost#3978 mad 3.5", onTotal(func(k string) anomaly.Detector { return anomaly.NewOpenCostMAD(k, costseries.Step) })},
		{"opencost#3978 z 3.0", onTotal(func(k string) anomaly.Detector { return anomaly.NewOpenCostZ(k, costseries.Step) })},
		{"daily batch", onTotal(func(k string) anomaly.Detector { return anomaly.NewDaily(k, costseries.Step) })},
	}
}

// runScope runs Bursar's scope detector over the workload's leaves, step by step.
func runScope(w *anomaly.Workload, cfg anomaly.Config) []anomaly.Anomaly {
	sc := anomaly.NewScope(w.Name, cfg)
	var out []anomaly.Anomaly
	byStart := map[string]int{}
	for i := range w.Steps() {
		children := make(map[string]anomaly.Child, len(w.Leaves))
		for _, l := range w.Leaves {
			children[l.Series] = anomaly.Child{USDPerHour: l.USDPerHour[i], GPUs: l.GPUs[i]}
		}
		for _, e := range sc.Observe(w.Start.Add(time.Duration(i)*w.Step), children) {
			id := e.Anomaly.Series + e.Anomaly.Start.String()
			k, ok := byStart[id]
			if !ok {
				byStart[id] = len(out)
				out = append(out, e.Anomaly)
				continue
			}
			out[k] = e.Anomaly
		}
	}
	return out
}

// Evaluate injects the plan drawn from seed into each workload, one injection at a time into
// its own slot (the plan's slots never overlap, so all of a workload's injections go in at
// once), runs d and scores it.
func Evaluate(ws []*anomaly.Workload, seed uint64, d Detector) anomaly.Scores {
	var s anomaly.Scores
	for _, w := range ws {
		plan := anomaly.Plan(seed, w)
		inj := w
		for _, j := range plan {
			inj = anomaly.Apply(inj, j)
		}
		clean, dirty := w.Total(), inj.Total()
		effects := make([]float64, len(plan))
		for k, j := range plan {
			effects[k] = anomaly.Effect(clean, dirty, j)
		}
		alerts := d.Run(inj)
		end := w.Start.Add(time.Duration(w.Steps()) * w.Step)
		weeks := float64(w.Steps()) * w.Step.Hours() / (7 * 24)
		s.Tally(plan, effects, alerts, end, weeks)
	}
	s.Finish()
	return s
}

// WriteTable prints one row per detector.
func WriteTable(out io.Writer, title string, names []string, scores []anomaly.Scores) error {
	fmt.Fprintln(out, title)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "detector\tinjected (scored)\tdetected\tmedian detect min\tp95 detect min\tprecision %\trecall %\trecall ≥2×≥15min %\talerts\tfalse\tfalse /100 series-weeks\tseries-weeks\t")
	for i, s := range scores {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%.0f\t%.1f\t%.1f\t%.1f\t%d\t%d\t%.1f\t%.1f\t\n", names[i], s.Injected, s.Detected,
			s.MedianDetectMin, s.P95DetectMin, s.PrecisionPct, s.RecallPct, s.Recall2x15Pct, s.Alerts, s.FalseAlerts,
			s.FalsePer100Weeks, s.SeriesWeeks)
	}
	return tw.Flush()
}

// Split returns the tuning and the reported workloads.
func Split(ws []*anomaly.Workload) (tune, report []*anomaly.Workload) {
	for _, w := range ws {
		if Tuning(w) {
			tune = append(tune, w)
		} else {
			report = append(report, w)
		}
	}
	return slices.Clip(tune), slices.Clip(report)
}
