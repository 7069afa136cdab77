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

// Event is the cost.anomaly event of change e of an anomaly, at the end of the step that made
// it, as docs/anomalies.md maps one: its id (series and start: the same on its open, updates and
// close, and for a standby that takes the lead mid-anomaly), its cause and what moved. A unit-price anomaly's series is the scope's key with anomaly.UnitPriceSuffix, its
// expected and observed figures $ per GPU-hour.
func Event(e anomaly.Event, at time.Time, currency string) *events.CostAnomaly {
	a := e.Anomaly
	return &events.CostAnomaly{Meta: events.Meta{At: at.UTC()}, Anomaly: a.ID(), State: states[e.Change],
		Series: a.Series, Cause: a.Cause(), Start: a.Start.UTC(),
		Expected: max(a.ExpectedUSDPerHour, 0), Observed: max(a.ObservedUSDPerHour, 0), Impact: a.ImpactUSD,
		Currency: currency, Moved: a.Moved()}
}
