package sim

import (
	"slices"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
)

// Reclaim is one line of a reclaim trace: at At, the provider takes a spot instance at Location
// back with Notice to go.
type Reclaim struct {
	At       time.Time
	Location string
	Notice   time.Duration
}

// Play adds a trace of reclaims; Due fires them as time passes.
func (f *Fleet) Play(trace []Reclaim) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.script = append(f.script, trace...)
	slices.SortStableFunc(f.script, func(a, b Reclaim) int { return a.At.Compare(b.At) })
}

// Due fires every scripted reclaim whose time has come and returns the notices to publish. A
// reclaim at a location with no ready spot instance is dropped: there was nothing to take.
func (f *Fleet) Due() []*events.CapacityReclaimed {
	f.mu.Lock()
	now := f.now()
	n := 0
	for n < len(f.script) && !f.script[n].At.After(now) {
		n++
	}
	due := slices.Clone(f.script[:n])
	f.script = f.script[n:]
	f.mu.Unlock()
	var out []*events.CapacityReclaimed
	for _, r := range due {
		if e, ok := f.Reclaim(r.Location, r.Notice); ok {
			out = append(out, e)
		}
	}
	return out
}
