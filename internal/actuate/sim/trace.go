package sim

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
)

// Reclaim is one line of a reclaim script: at At, the provider takes a spot instance at Location
// back with Notice to go.
type Reclaim struct {
	At       time.Time
	Location string
	Notice   time.Duration
}

// Play adds a script of reclaims; Due fires them as time passes.
func (f *Fleet) Play(script []Reclaim) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.script = append(f.script, script...)
	slices.SortStableFunc(f.script, func(a, b Reclaim) int { return a.At.Compare(b.At) })
}

// Due brings the fleet to now and returns the reclaim notices to publish: those of capacity that
// fell since the last call, then every scripted reclaim whose time has come. A scripted reclaim at
// a location with no ready spot instance is dropped: there was nothing to take.
func (f *Fleet) Due() []*events.CapacityReclaimed {
	f.mu.Lock()
	now := f.now()
	f.step(now)
	out := f.market.pending
	f.market.pending = nil
	n := 0
	for n < len(f.script) && !f.script[n].At.After(now) {
		n++
	}
	due := slices.Clone(f.script[:n])
	f.script = f.script[n:]
	f.mu.Unlock()
	for _, r := range due {
		if e, ok := f.Reclaim(r.Location, r.Notice); ok {
			out = append(out, e)
		}
	}
	return out
}

// Publisher publishes an event; *bus.Publisher is one.
type Publisher interface {
	Publish(ctx context.Context, e events.Event) error
}

// Notify publishes the reclaim notices now due (Due) and waits until await says the arbiter has
// folded them, so its next round sees them whatever the bus's speed; it returns the notices. The
// demo and the replays drive their sim market with it once a tick.
func (f *Fleet) Notify(ctx context.Context, pub Publisher, await func(ctx context.Context, ids []string) error) ([]*events.CapacityReclaimed, error) {
	due := f.Due()
	ids := make([]string, 0, len(due))
	for _, e := range due {
		if err := pub.Publish(ctx, e); err != nil {
			return due, fmt.Errorf("publishing a reclaim: %w", err)
		}
		ids = append(ids, e.ID)
	}
	return due, await(ctx, ids)
}
