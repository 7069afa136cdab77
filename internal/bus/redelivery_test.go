package bus

import (
	"testing"
	"time"
)

// TestRedeliveryDelay: a failed message comes back within the upper half of its exponential
// ceiling, capped, and messages failing together are spread apart rather than all redelivered
// after the same delay.
func TestRedeliveryDelay(t *testing.T) {
	tests := []struct {
		name      string
		spec      ConsumerSpec
		delivered uint64
		wantHi    time.Duration
	}{
		{name: "defaults, first delivery", delivered: 1, wantHi: 100 * time.Millisecond},
		{name: "never delivered counts as first", delivered: 0, wantHi: 100 * time.Millisecond},
		{name: "doubles per delivery", spec: ConsumerSpec{MinBackoff: time.Second, MaxBackoff: time.Minute}, delivered: 4, wantHi: 8 * time.Second},
		{name: "capped", spec: ConsumerSpec{MinBackoff: time.Second, MaxBackoff: 5 * time.Second}, delivered: 10, wantHi: 5 * time.Second},
		{name: "a huge count stays at the default cap", delivered: 1 << 40, wantHi: 30 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := map[time.Duration]bool{}
			for range 50 {
				d := tt.spec.redeliveryDelay(tt.delivered)
				if d < tt.wantHi-tt.wantHi/2 || d > tt.wantHi {
					t.Fatalf("delay = %v, want within [%v, %v]", d, tt.wantHi-tt.wantHi/2, tt.wantHi)
				}
				seen[d] = true
			}
			if len(seen) < 2 {
				t.Errorf("50 messages failing together all wait %v: no jitter", seen)
			}
		})
	}
}
