// Package sim is an in-process fleet that behaves like a ReplicaSet on spot capacity, under the
// market model of ../shared/REPLAY.md: a scale sets the desired count; a launch gets an instance
// only while its location has spot capacity left (else it stays pending, "insufficient capacity",
// as an Unschedulable pod would); instances become ready after the location's launch delay; when
// capacity falls below what runs, the newest instances are reclaimed with the provider's notice
// and vanish at their deadline. Its clock is injected, so tests, the demo and the replay drive
// time themselves.
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
	order  []actuate.Group // the groups' keys, sorted (keys)
	// stepped is the time of the last step of every group.
	stepped time.Time
	calls   []actuate.Target
	// checkpoints are the checkpoint requests received (see Checkpoints).
	checkpoints []Checkpoint
	life        []Life
	next        int
	script      []Reclaim
	market      capacity
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

// New returns an empty fleet over cfg's locations (their sim launch delays), reading time from
// now. Spot capacity is unlimited until SetCapacity or UseTrace limits it.
func New(cfg *fleet.Config, now func() time.Time) *Fleet {
	return &Fleet{cfg: cfg, now: now, groups: map[actuate.Group]*group{}, market: newCapacity()}
}

// Router routes each sim location of the fleet's config to f, for an arbiter whose sim
// locations share this one fleet (the demo's and the replays' are all sim).
func (f *Fleet) Router() actuate.Router {
	r := actuate.Router{}
	for _, l := range f.cfg.Locations {
		if l.Actuator.Kind == fleet.KindSim {
			r[l.Name] = f
		}
	}
	return r
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
	if t.Kind == actuate.KindCheckpoint {
		f.checkpoints = append(f.checkpoints, Checkpoint{Target: t, At: f.now()})
		return nil // a job's instances save their progress; nothing is launched or stopped
	}
	g := f.group(t.Group)
	g.desired = t.Replicas
	if t.Offer != "" {
		g.offer = t.Offer
	}
	now := f.now()
	if _, limited := f.market.limit[t.Location]; !limited && f.market.trace == nil && now.Equal(f.stepped) {
		// Nothing else moved since the last step (same time, and no shared capacity this group's
		// change could free or take): bring this group alone to its count. A large fleet is
		// scaled a group at a time, and stepping every group per call made that quadratic.
		f.ripen(t.Group, g, now)
		f.fit(t.Group, g, now)
		return nil
	}
	f.step(now)
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

// Observe advances the fleet to now and reports every group: its ready instances, those still
// starting (both oldest first, so a notice can be matched to the replica of its instance's age),
// and the replicas pending for want of capacity.
func (f *Fleet) Observe(_ context.Context) ([]actuate.Observed, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.step(f.now())
	out := make([]actuate.Observed, 0, len(f.groups))
	for _, k := range f.keys() {
		g := f.groups[k]
		o := actuate.Observed{Group: k, Offer: g.offer, Desired: g.desired}
		for _, i := range g.insts {
			if l := f.life[i]; !l.Ready.IsZero() {
				o.Ready++
				o.Instances = append(o.Instances, l.Instance)
			} else {
				o.Starting = append(o.Starting, l.Instance)
			}
		}
		if o.Pending = g.desired - len(g.insts); o.Pending > 0 {
			o.Reason = actuate.ReasonNoCapacity
		} else {
			o.Pending = 0
		}
		out = append(out, o)
	}
	return out, nil
}

// keys are the groups in a fixed order, so that who gets the last capacity is deterministic. The
// order is kept as groups are added: a fleet steps on every call, and sorting a thousand groups
// each time cost more than the rest of the call.
func (f *Fleet) keys() []actuate.Group { return f.order }

// Calls returns every Scale call the fleet accepted, in order.
func (f *Fleet) Calls() []actuate.Target {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// Checkpoint is a checkpoint request the fleet received: a job's instances in Target's group were
// asked to save their progress at At.
type Checkpoint struct {
	Target actuate.Target
	At     time.Time
}

// Checkpoints returns the checkpoint requests received, in order.
func (f *Fleet) Checkpoints() []Checkpoint {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.checkpoints)
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
		i, _ := slices.BinarySearchFunc(f.order, k, actuate.CompareGroups)
		f.order = slices.Insert(f.order, i, k)
	}
	return g
}

// step brings every group to now: launches that finished are ready, reclaimed instances whose
// deadline passed are gone, groups above their desired count shed instances (unready ones first,
// like a ReplicaSet), capacity that fell reclaims the newest instances, and groups below their
// desired count launch into the capacity left; the rest stays pending.
func (f *Fleet) step(now time.Time) {
	f.market.follow(now)
	keys := f.keys()
	for _, k := range keys {
		g := f.groups[k]
		f.ripen(k, g, now)
		for len(g.insts) > g.desired {
			f.remove(g, f.victim(g), now)
		}
	}
	f.clamp(now)
	for _, k := range keys {
		f.grow(k, f.groups[k], now)
	}
	f.stepped = now
}

// fit sheds the group's instances above its desired count and launches up to it.
func (f *Fleet) fit(k actuate.Group, g *group, now time.Time) {
	for len(g.insts) > g.desired {
		f.remove(g, f.victim(g), now)
	}
	f.grow(k, g, now)
}

// grow launches the group's missing instances into the capacity left.
func (f *Fleet) grow(k actuate.Group, g *group, now time.Time) {
	for len(g.insts) < g.desired && f.room(k, now) > 0 {
		f.life = append(f.life, Life{Instance: fmt.Sprintf("%s-%d", k.Location, f.next), Group: k, Launched: now})
		f.next++
		g.insts = append(g.insts, len(f.life)-1)
	}
}

// ripen marks the group's finished launches ready and ends its reclaimed instances whose deadline
// has passed.
func (f *Fleet) ripen(k actuate.Group, g *group, now time.Time) {
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
// when the location runs no spot instance. It is a reclaim scripted by a test; a capacity trace
// reclaims by itself (see Due).
func (f *Fleet) Reclaim(location string, notice time.Duration) (e *events.CapacityReclaimed, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	f.step(now)
	for _, k := range f.keys() {
		if k.Location != location || k.Market != events.Spot {
			continue
		}
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
