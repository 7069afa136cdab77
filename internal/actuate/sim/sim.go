// Package sim is an in-process fleet that behaves like a ReplicaSet on spot capacity: a scale
// sets the desired count, launches become ready after the location's launch delay, reclaimed
// instances vanish at their deadline and are replaced while the desired count says so. Its clock
// is injected, so tests, the demo and the replay drive time themselves.
package sim

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
)

// Fleet is the simulated estate. It is safe for concurrent use.
type Fleet struct {
	mu     sync.Mutex
	cfg    *fleet.Config
	now    func() time.Time
	groups map[actuate.Group]*group
	calls  []actuate.Target
	life   []Life
	next   int
	script []Reclaim
	// FailNext, when set, makes the next Scale call fail with it (and do nothing).
	FailNext error
}

// Life is one instance's history, for checks such as "the replacement was ready before the
// reclaimed instance was gone".
type Life struct {
	Instance string
	Group    actuate.Group
	Launched time.Time
	Ready    time.Time // when it became ready (zero if it never did)
	Gone     time.Time // zero while it lives
	Reclaim  bool      // it went because it was reclaimed
}

type group struct {
	desired int
	offer   string
	insts   []int // indices into life, alive ones, oldest first
	dying   map[int]time.Time
}

var (
	_ actuate.Actuator = (*Fleet)(nil)
	_ actuate.Reporter = (*Fleet)(nil)
)

// New returns an empty fleet over cfg's locations (their sim launch delays), reading time from now.
func New(cfg *fleet.Config, now func() time.Time) *Fleet {
	return &Fleet{cfg: cfg, now: now, groups: map[actuate.Group]*group{}}
}

// Scale sets the group's desired count, launching or removing instances at once.
func (f *Fleet) Scale(_ context.Context, t actuate.Target) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.FailNext; err != nil {
		f.FailNext = nil
		return err
	}
	if _, ok := f.cfg.Location(t.Location); !ok {
		return fmt.Errorf("%w: sim has no location %q", actuate.ErrNotFound, t.Location)
	}
	f.calls = append(f.calls, t)
	g := f.group(t.Group)
	g.desired = t.Replicas
	if t.Offer != "" {
		g.offer = t.Offer
	}
	f.step(f.now())
	return nil
}

// Desired reads back the group's desired count.
func (f *Fleet) Desired(_ context.Context, g actuate.Group) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if gr, ok := f.groups[g]; ok {
		return gr.desired, nil
	}
	return 0, nil
}

// Observe advances the fleet to now and reports every group.
func (f *Fleet) Observe(_ context.Context) ([]actuate.Observed, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	f.step(now)
	out := make([]actuate.Observed, 0, len(f.groups))
	for k, g := range f.groups {
		o := actuate.Observed{Group: k, Offer: g.offer, Desired: g.desired}
		for _, i := range g.insts {
			if l := f.life[i]; !l.Ready.IsZero() {
				o.Ready++
				o.Instances = append(o.Instances, l.Instance)
			}
		}
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b actuate.Observed) int { return compareGroups(a.Group, b.Group) })
	return out, nil
}

func compareGroups(a, b actuate.Group) int {
	switch {
	case a.String() < b.String():
		return -1
	case a.String() > b.String():
		return 1
	}
	return 0
}

// Calls returns every Scale call the fleet accepted, in order.
func (f *Fleet) Calls() []actuate.Target {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// Lives returns every instance's history, in launch order.
func (f *Fleet) Lives() []Life {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.step(f.now())
	return slices.Clone(f.life)
}

func (f *Fleet) group(k actuate.Group) *group {
	g, ok := f.groups[k]
	if !ok {
		g = &group{dying: map[int]time.Time{}}
		f.groups[k] = g
	}
	return g
}

// step brings every group to now: launches that finished are ready, reclaimed instances whose
// deadline passed are gone, and each group launches or removes instances to meet its desired
// count (unready ones go first, like a ReplicaSet).
func (f *Fleet) step(now time.Time) {
	for k, g := range f.groups {
		delay := f.delay(k.Location)
		for _, i := range g.insts {
			if l := &f.life[i]; l.Ready.IsZero() && !now.Before(l.Launched.Add(delay)) {
				l.Ready = l.Launched.Add(delay)
			}
		}
		g.insts = slices.DeleteFunc(g.insts, func(i int) bool {
			if d, ok := g.dying[i]; ok && !now.Before(d) {
				f.life[i].Gone, f.life[i].Reclaim = d, true
				delete(g.dying, i)
				return true
			}
			return false
		})
		for len(g.insts) < g.desired {
			f.life = append(f.life, Life{Instance: fmt.Sprintf("%s-%d", k.Location, f.next), Group: k, Launched: now})
			f.next++
			g.insts = append(g.insts, len(f.life)-1)
		}
		for len(g.insts) > g.desired {
			f.remove(g, f.victim(g), now)
		}
	}
}

// victim picks the instance a scale-down removes: one already dying, else the newest unready one,
// else the newest.
func (f *Fleet) victim(g *group) int {
	for at, i := range g.insts {
		if _, ok := g.dying[i]; ok {
			return at
		}
	}
	for at := len(g.insts) - 1; at >= 0; at-- {
		if f.life[g.insts[at]].Ready.IsZero() {
			return at
		}
	}
	return len(g.insts) - 1
}

func (f *Fleet) remove(g *group, at int, now time.Time) {
	i := g.insts[at]
	f.life[i].Gone = now
	delete(g.dying, i)
	g.insts = slices.Delete(g.insts, at, at+1)
}

func (f *Fleet) delay(location string) time.Duration {
	if l, ok := f.cfg.Location(location); ok {
		return l.Actuator.LaunchDelay
	}
	return 0
}

// Reclaim gives the oldest ready, not yet reclaimed instance of a spot group at location notice
// before it goes, and returns the capacity.reclaimed event a provider would send. ok is false
// when the location runs no spot instance.
func (f *Fleet) Reclaim(location string, notice time.Duration) (e *events.CapacityReclaimed, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	f.step(now)
	keys := make([]actuate.Group, 0, len(f.groups))
	for k := range f.groups {
		if k.Location == location && k.Market == events.Spot {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, compareGroups)
	for _, k := range keys {
		g := f.groups[k]
		for _, i := range g.insts {
			if _, dying := g.dying[i]; dying || f.life[i].Ready.IsZero() {
				continue
			}
			g.dying[i] = now.Add(notice)
			return f.notice(k, f.life[i].Instance, now, now.Add(notice)), true
		}
	}
	return nil, false
}

func (f *Fleet) notice(k actuate.Group, inst string, now, deadline time.Time) *events.CapacityReclaimed {
	l, _ := f.cfg.Location(k.Location)
	e := &events.CapacityReclaimed{Meta: events.Meta{At: now}, Location: k.Location, Instance: inst,
		Node: inst, Kind: events.ReclaimInterruption, NoticeAt: now, Deadline: deadline, Source: "sim"}
	if l != nil {
		e.Provider, e.Region = l.Provider, l.Region
		if len(l.Zones) > 0 {
			e.Zone = l.Zones[0]
		}
	}
	return e
}
