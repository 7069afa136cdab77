package anomalywatch

import (
	"time"

	"github.com/bursar-dev/bursar/internal/anomaly"
	"github.com/bursar-dev/bursar/internal/events"
)

// The states of a cost.anomaly event.
const (
	StateOpen   = "open"
	StateUpdate = "update"
	StateClosed = "closed"
)

var states = map[anomaly.Change]string{anomaly.Opened: StateOpen, anomaly.Updated: StateUpdate, anomaly.Closed: StateClosed}

// ID names an anomaly: its series (the scope, or the scope's unit price) and the start of its
// first step, so that the open, its updates and its close share it, and an arbiter that takes
// the lead mid-anomaly names it as its predecessor did.
func ID(series string, start time.Time) string {
	return events.Token(series) + "@" + start.UTC().Format("20060102T1504Z")
}

// Event is the cost.anomaly event of change e of scope's anomaly, at the end of the step that
// made it. A unit-price anomaly's series is the scope's key with anomaly.UnitPriceSuffix, its
// expected and observed figures $ per GPU-hour.
func Event(scope string, e anomaly.Event, at time.Time, currency string) *events.CostAnomaly {
	a := e.Anomaly
	moved := make([]string, 0, len(a.Explanation))
	for _, c := range a.Explanation {
		moved = append(moved, Moved(scope, c.Series))
	}
	return &events.CostAnomaly{Meta: events.Meta{At: at.UTC()}, Anomaly: ID(a.Series, a.Start), State: states[e.Change],
		Series: a.Series, Cause: a.Cause(), Start: a.Start.UTC(),
		Expected: max(a.ExpectedUSDPerHour, 0), Observed: max(a.ObservedUSDPerHour, 0), Impact: a.ImpactUSD,
		Currency: currency, Moved: moved}
}
