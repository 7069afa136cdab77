package alert

import (
	"testing"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/slack"
)

// TestStreamFillAlertsOncePerRise: a stream over the threshold is announced once, stays quiet
// while it hovers there, and is announced again only after it fell clearly under it.
func TestStreamFillAlertsOncePerRise(t *testing.T) {
	tr := NewTracker(Thresholds{Fill: 0.8})
	market := func(mib uint64) []bus.Fill {
		return []bus.Fill{{Stream: bus.Market, Bytes: mib << 20, MaxBytes: 100 << 20}, {Stream: bus.DLQ, Bytes: 1 << 30}}
	}
	for _, tt := range []struct {
		name string
		mib  uint64
		want int
	}{
		{"under", 50, 0},
		{"over", 81, 1},
		{"still over", 95, 0},
		{"hovering just under", 78, 0},
		{"over again without having fallen", 82, 0},
		{"clearly under", 60, 0},
		{"over once more", 90, 1},
	} {
		got := tr.Fills(market(tt.mib))
		if len(got) != tt.want {
			t.Fatalf("%s (%d MiB of 100): %d alerts, want %d", tt.name, tt.mib, len(got), tt.want)
		}
		if len(got) == 1 {
			a, ok := got[0].(slack.StreamFilling)
			if !ok || a.Stream != bus.Market || kindOf(a) != "stream_filling" {
				t.Fatalf("%s: alert %#v, want MARKET filling", tt.name, got[0])
			}
		}
	}
	if got := NewTracker(Thresholds{}).Fills(market(99)); len(got) != 0 {
		t.Fatalf("the fill alert turned off still alerted: %v", got)
	}
}
