package budget

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
)

// Ledger folds replica.state observations into priced intervals: each observation says how many
// replicas are ready on one offer from its time on, at its price, until the next observation of
// the same offer. It is how the arbiter feeds Gate.Evaluate; it does no I/O.
type Ledger struct {
	// Teams maps a workload to its team label, for team scopes; nil means no teams.
	Teams  map[string]string
	open   map[ledgerKey]*Interval
	closed []Interval
}

type ledgerKey struct{ workload, location, market, offer string }

// Observe records one replica.state event. Observations must arrive in time order per offer;
// an older one than the open interval is ignored.
func (l *Ledger) Observe(e *events.ReplicaState) {
	if l.open == nil {
		l.open = map[ledgerKey]*Interval{}
	}
	k := ledgerKey{e.Workload, e.Location, string(e.Market), e.Offer}
	cur := l.open[k]
	if cur != nil {
		if e.At.Before(cur.From) || (cur.Count == e.Ready && cur.USDPerHour == e.USDPerHour) {
			return
		}
		if e.At.After(cur.From) {
			done := *cur
			done.To = e.At
			l.closed = append(l.closed, done)
		}
		delete(l.open, k)
	}
	if e.Ready > 0 {
		l.open[k] = &Interval{Workload: e.Workload, Team: l.Teams[e.Workload], Provider: e.Provider,
			Location: e.Location, Market: string(e.Market), Count: e.Ready, USDPerHour: e.USDPerHour, From: e.At}
	}
}

// Intervals returns every interval that overlaps [since, ∞), the open ones still running.
func (l *Ledger) Intervals(since time.Time) []Interval {
	out := make([]Interval, 0, len(l.closed)+len(l.open))
	for _, iv := range l.closed {
		if iv.To.After(since) {
			out = append(out, iv)
		}
	}
	for _, iv := range l.open {
		out = append(out, *iv)
	}
	// Map order would make float sums differ in the last bits from call to call.
	slices.SortStableFunc(out[len(out)-len(l.open):], func(a, b Interval) int {
		return cmp.Or(a.From.Compare(b.From), strings.Compare(a.Workload, b.Workload),
			strings.Compare(a.Location, b.Location), cmpFloat(a.USDPerHour, b.USDPerHour))
	})
	return out
}

// Running returns the intervals still open: what runs now, at its price.
func (l *Ledger) Running() []Interval {
	out := make([]Interval, 0, len(l.open))
	for _, iv := range l.open {
		out = append(out, *iv)
	}
	return out
}

// Prune forgets closed intervals that ended before t (older than any period still evaluated).
func (l *Ledger) Prune(t time.Time) {
	kept := l.closed[:0]
	for _, iv := range l.closed {
		if iv.To.After(t) {
			kept = append(kept, iv)
		}
	}
	l.closed = kept
}
