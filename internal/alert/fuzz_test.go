package alert

import (
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/events/eventstest"
)

// FuzzTracker feeds whatever decodes from the bus (an event or a batch's) to a tracker that already holds a fleet, a
// notice and sources: no event, however odd its fields, may make it panic.
func FuzzTracker(f *testing.F) {
	for i, e := range eventstest.Samples(t0, 1) {
		b, err := events.Encode(e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, int64(i)*int64(time.Minute))
	}
	f.Add([]byte(`{"type":"action.updated","version":"1.0","id":"x","at":"2026-11-30T09:00:00Z"}`), int64(0))
	f.Fuzz(func(t *testing.T, data []byte, later int64) {
		evs, err := events.DecodeAll(data)
		if err != nil {
			return
		}
		tr := NewTracker(testThresholds)
		for _, s := range append(before(), ev(reclaim("i-1", 0, 2*time.Minute)), ev(gpu(use1, 0)), ev(price("aws-spot", "aws", 0))) {
			tr.Observe(s.e)
		}
		for _, e := range append(evs, evs...) {
			tr.Observe(e)
		}
		tr.Tick(t0.Add(time.Duration(later)))
		tr.Tick(t0.Add(48 * time.Hour))
	})
}
