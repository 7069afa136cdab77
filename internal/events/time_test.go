package events_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/events/eventstest"
)

// TestTimeRangeErrorSaysFieldValueAndRange: a time the history cannot hold is refused with the
// field, the value as sent and the range allowed.
func TestTimeRangeErrorSaysFieldValueAndRange(t *testing.T) {
	e := eventstest.Samples(at, 1)[2].(*events.GPUSample)
	e.At = time.Date(1970, 1, 1, 0, 0, 0, 5e8, time.UTC)
	err := events.Validate(e)
	if !errors.Is(err, events.ErrOutOfRange) {
		t.Fatalf("Validate = %v, want ErrOutOfRange", err)
	}
	for _, want := range []string{`field "at"`, "1970-01-01T00:00:00.5Z", "2000-01-01T00:00:00Z", "2100-01-01T00:00:00Z"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestCheckTimeRefusesTheFutureOnly: at may lie up to MaxSkew after the reader's clock; beyond
// that it is refused, with the value, the limit and what to check. Any past time in the
// absolute range passes: staleness is the reader's to judge.
func TestCheckTimeRefusesTheFutureOnly(t *testing.T) {
	now := time.Date(2026, 12, 3, 20, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		at      time.Time
		wantErr bool
	}{
		{"now", now, false},
		{"a year ago", now.AddDate(-1, 0, 0), false},
		{"2000", events.MinTime, false},
		{"within the skew", now.Add(events.MaxSkew), false},
		{"just past the skew", now.Add(events.MaxSkew + time.Millisecond), true},
		{"an hour ahead", now.Add(time.Hour), true},
		{"2099", time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, e := range eventstest.Samples(tt.at, 1) {
				err := events.CheckTime(e, now)
				if (err != nil) != tt.wantErr {
					t.Fatalf("%s: CheckTime = %v, want error %v", e.EventType(), err, tt.wantErr)
				}
				if err == nil {
					continue
				}
				var ee *events.Error
				if !errors.As(err, &ee) || ee.Field != "at" || !errors.Is(err, events.ErrOutOfRange) {
					t.Fatalf("CheckTime = %#v, want an out-of-range error on at", err)
				}
				for _, want := range []string{tt.at.Format(time.RFC3339Nano), now.Add(events.MaxSkew).Format(time.RFC3339), "clock"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not say %q", err, want)
					}
				}
				if verr := events.ValidateAt(e, now); verr == nil {
					t.Errorf("ValidateAt accepted what CheckTime refuses")
				}
			}
		})
	}
}
