// Package anomaly finds cost anomalies in spend series: pure, deterministic, no I/O and no
// clock. A Detector is fed one point per step (Observe, as a live loop calls it every 5 minutes)
// and says when an anomaly opens, grows and closes; Run feeds it a whole series (batch). Three
// detectors share the interface: Bursar's (Seasonal: a seasonal baseline and a robust spread),
// the rule of the OpenCost proposal (OpenCostRule) and a once-a-day batch job (Daily). Scope
// explains a scope's anomaly by the child series that moved; Quieter drops repeats of a cause a
// person marked as expected. docs/anomalies.md gives the rules and the benchmark.
package anomaly

import (
	"slices"
	"strings"
	"time"
)

// Point is one step of a series: its start and the mean spend rate during it.
type Point struct {
	At         time.Time
	USDPerHour float64
}

// Anomaly is spend above what a series' history leads to expect.
type Anomaly struct {
	// Series is the key of the series it was found in.
	Series string
	// Start is the first step of the excursion; DetectedAt is when the detector knew (the end of
	// the step that decided it); End is the end of its last step, zero while it is open.
	Start, DetectedAt, End time.Time
	// ExpectedUSDPerHour and ObservedUSDPerHour are the baseline and the spend rate at the
	// latest step.
	ExpectedUSDPerHour, ObservedUSDPerHour float64
	// ImpactUSD is the spend above the baseline since Start.
	ImpactUSD float64
	// Explanation lists the child series that moved, largest first (Scope fills it).
	Explanation []Contribution
}

// Cause is what a person's answer about this anomaly applies to: the series and the children
// that explain it, in key order (Quieter). The same children moving in the same scope again is
// the same cause, whatever the sizes.
func (a *Anomaly) Cause() string {
	kids := make([]string, len(a.Explanation))
	for i, e := range a.Explanation {
		kids[i] = e.Series
	}
	slices.Sort(kids)
	return strings.Join(append([]string{a.Series}, kids...), "|")
}

// ID names the anomaly in its events (open, updates, close): its series and start.
func (a *Anomaly) ID() string {
	return a.Series + "@" + a.Start.UTC().Format(time.RFC3339)
}

// Moved names the children that explain the anomaly, most first, for the cost.anomaly event:
// where keys are "dimension=value" lists (team=search,workload=llm,...), a child's pairs that
// the anomaly's own series key lacks ("workload=llm,location=aws-use1"); else the child's key.
// A unit-price anomaly's key is its scope's with UnitPriceSuffix: the scope's dimensions are
// dropped from its children as from the total's.
func (a *Anomaly) Moved() []string {
	own := map[string]bool{}
	for _, d := range strings.Split(strings.TrimSuffix(a.Series, UnitPriceSuffix), ",") {
		own[d] = true
	}
	out := make([]string, 0, len(a.Explanation))
	for _, c := range a.Explanation {
		var dims []string
		for _, d := range strings.Split(c.Series, ",") {
			if !own[d] {
				dims = append(dims, d)
			}
		}
		if len(dims) == 0 || !strings.Contains(c.Series, "=") {
			dims = []string{c.Series}
		}
		out = append(out, strings.Join(dims, ","))
	}
	return out
}

// Open says whether the anomaly is still going on.
func (a *Anomaly) Open() bool { return a.End.IsZero() }

// Change is what happened to an anomaly at a step.
type Change int

// The changes an Observe reports.
const (
	Opened Change = iota + 1
	Updated
	Closed
)

func (c Change) String() string {
	switch c {
	case Opened:
		return "opened"
	case Updated:
		return "updated"
	case Closed:
		return "closed"
	}
	return "none"
}

// Event is one change of one anomaly, with the anomaly as it stands after it.
type Event struct {
	Change  Change
	Anomaly Anomaly
}

// Detector watches one series. Observe takes the next point (in time order, one per step) and
// returns what changed; most steps change nothing.
type Detector interface {
	Observe(p Point) []Event
}

// Run feeds a whole series to d (batch use) and returns every anomaly it raised, in the state
// it ended in: closed, or open at the series' end.
func Run(d Detector, pts []Point) []Anomaly {
	var out []Anomaly
	index := map[time.Time]int{} // by Start: one anomaly per excursion
	for _, p := range pts {
		for _, e := range d.Observe(p) {
			i, ok := index[e.Anomaly.Start]
			if !ok || e.Change == Opened {
				index[e.Anomaly.Start] = len(out)
				out = append(out, e.Anomaly)
				continue
			}
			out[i] = e.Anomaly
		}
	}
	return out
}
