package arbiter

import (
	"cmp"
	"encoding/hex"
	"hash/fnv"
	"slices"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/placement"
)

// settle brings the books up to date with what happened since the last pass: reclaim notices
// mark replicas reclaimed, replicas past their reclaim deadline are retired, what the actuators
// report drops what they do not hold and promotes launching replicas, and launches that cannot get capacity are given up.
// s.mu is held. It returns the workloads whose books changed.
func (s *Service) settle(now time.Time) map[string]bool {
	dirty := map[string]bool{}
	s.applyNotices(now, dirty)
	s.retire(now, dirty)
	s.reconcile(now, dirty)
	s.promote(dirty)
	s.giveUp(now, dirty)
	return dirty
}

// applyNotices marks one replica reclaimed per notice not yet applied. A notice names an instance
// or node; the actuators' reports say which group runs there. Without a match, at a location whose
// actuator names no instances, the notice falls on a ready spot replica there (groups in name
// order), since a provider reclaims spot capacity only.
func (s *Service) applyNotices(now time.Time, dirty map[string]bool) {
	applied := map[string]bool{}
	for _, b := range s.books {
		for _, n := range b.Notices {
			applied[n] = true
		}
	}
	s.mk.mu.Lock()
	var todo []notice
	for id, n := range s.mk.notices {
		switch {
		case now.Sub(n.e.Deadline) > time.Hour:
			delete(s.mk.notices, id)
		case !applied[id]: // one past its deadline still takes its replica (a zero notice)
			todo = append(todo, n)
		}
	}
	s.mk.mu.Unlock()
	slices.SortFunc(todo, func(a, b notice) int { return cmp.Or(a.e.NoticeAt.Compare(b.e.NoticeAt), cmp.Compare(a.e.ID, b.e.ID)) })
	for _, n := range todo {
		b, i := s.victim(n, !n.e.Deadline.After(now))
		if b == nil {
			continue
		}
		r := &b.Replicas[i]
		r.State, r.Deadline, r.Notice = placement.StateReclaimed, n.e.Deadline, n.e.ID
		b.Notices = append(b.Notices, n.e.ID)
		if len(b.Notices) > maxDone {
			b.Notices = slices.Clone(b.Notices[len(b.Notices)-maxDone:])
		}
		ob := placement.Observation{At: n.e.NoticeAt, Kind: placement.ObsPreempted, Lived: n.e.NoticeAt.Sub(r.Since)}
		s.mk.mu.Lock()
		s.mk.history[r.Offer] = append(s.mk.history[r.Offer], ob)
		s.mk.mu.Unlock()
		s.newObs = append(s.newObs, placement.OfferObservation{Offer: r.Offer, Observation: ob})
		dirty[b.Workload] = true
	}
}

// victim finds the replica a notice takes: in the group running the named instance (the newest
// launching replica when the instance was still starting, else the ready replica launched last
// before the instance was first reported, or else the oldest ready one), else, unless
// exact, in the spot groups at the notice's location, the oldest ready replica there. A notice
// past its deadline is applied exactly or not at all: a guess would take a replica that was
// launched after the loss. Where the actuator names its instances, a notice for one it does not
// name struck something else and takes nothing (it stays, in case a later report names it).
func (s *Service) victim(n notice, exact bool) (*Book, int) {
	s.mk.mu.Lock()
	g, ok := s.mk.instance[n.e.Instance]
	name := n.e.Instance
	if !ok && n.e.Node != "" {
		g, ok = s.mk.instance[n.e.Node]
		name = n.e.Node
	}
	starting := s.mk.starting[name]
	first := s.mk.seen[name].first
	named := s.mk.namesInstancesAt(n.e.Location)
	s.mk.mu.Unlock()
	if ok {
		if b := s.books[g.Workload]; b != nil {
			if i := launchedBefore(b, g, first); i >= 0 && !starting {
				return b, i
			}
			if i := pick(b, g, starting); i >= 0 {
				return b, i
			}
		}
	}
	if exact || named {
		return nil, -1
	}
	for _, w := range s.workloadNames() {
		b := s.books[w]
		g := actuate.Group{Workload: w, Location: n.e.Location, Market: "spot"}
		if i := oldestReady(b, g); i >= 0 {
			return b, i
		}
	}
	return nil, -1
}

// namesInstancesAt says whether the actuator at location reports which instances its groups run
// on (the kube and sim actuators do; a webhook does not). m.mu is held.
func (m *market) namesInstancesAt(location string) bool {
	for g, o := range m.observed {
		if g.Location == location && (o.Instances != nil || o.Starting != nil) {
			return true
		}
	}
	return false
}

// launchedBefore is the ready replica of g that an instance first reported at first runs: the
// one launched last before then, since an instance is reported only after its launch. It is -1
// when no ready replica of g was launched before first.
func launchedBefore(b *Book, g actuate.Group, first time.Time) int {
	at := -1
	for i, r := range b.Replicas {
		if r.group(b.Workload) == g && r.State == placement.StateReady && !r.Since.After(first) &&
			(at < 0 || !r.Since.Before(b.Replicas[at].Since)) {
			at = i
		}
	}
	return at
}

// pick is the replica of g a notice for one of its instances takes: the newest launching one for
// an instance still starting, else the oldest ready one; either falls back on the other.
func pick(b *Book, g actuate.Group, starting bool) int {
	if starting {
		if i := newestLaunching(b, g); i >= 0 {
			return i
		}
		return oldestReady(b, g)
	}
	if i := oldestReady(b, g); i >= 0 {
		return i
	}
	return newestLaunching(b, g)
}

func newestLaunching(b *Book, g actuate.Group) int {
	at := -1
	for i, r := range b.Replicas {
		if r.group(b.Workload) == g && r.State == placement.StateLaunching && (at < 0 || !r.Since.Before(b.Replicas[at].Since)) {
			at = i
		}
	}
	return at
}

func oldestReady(b *Book, g actuate.Group) int {
	at := -1
	for i, r := range b.Replicas {
		if r.group(b.Workload) == g && r.State == placement.StateReady && (at < 0 || r.Since.Before(b.Replicas[at].Since)) {
			at = i
		}
	}
	return at
}

// retire removes reclaimed replicas whose deadline has passed and records an action lowering
// their group's count, so the actuator does not bring the lost replica back on its own.
func (s *Service) retire(now time.Time, dirty map[string]bool) {
	for _, w := range s.workloadNames() {
		b := s.books[w]
		for i := 0; i < len(b.Replicas); i++ {
			r := b.Replicas[i]
			if r.State != placement.StateReclaimed || r.Deadline.After(now) {
				continue
			}
			b.Replicas = slices.Delete(b.Replicas, i, i+1)
			i--
			g := r.group(w)
			id := retireID(w, r.ID)
			if b.finished(id) {
				continue
			}
			b.Actions = append(b.Actions, Record{Target: actuate.Target{ActionID: id, Group: g, Offer: r.Offer,
				Replicas: b.count(g), Kind: "retire", Reason: string(placement.ReasonReclaim)},
				PlanID: planID(now, w), Stage: StageRecorded, At: now, CostPerHour: -r.PricePerHour})
			s.announce(b.Actions[len(b.Actions)-1], w, statusOf(StageRecorded), "reclaimed replica "+r.ID+" is gone")
			dirty[w] = true
		}
	}
}

func retireID(workload, replica string) string {
	h := fnv.New128a()
	h.Write([]byte("retire\x00" + workload + "\x00" + replica))
	return hex.EncodeToString(h.Sum(nil))
}

// promote sets each group's ready replicas from what its actuator reports: the oldest launching
// replicas become ready as the ready count grows, and the newest ready ones fall back to
// launching when it shrinks (a pod restarting). Reclaimed replicas are counted as ready until
// their deadline.
func (s *Service) promote(dirty map[string]bool) {
	s.mk.mu.Lock()
	obs := make(map[actuate.Group]int, len(s.mk.observed))
	for g, o := range s.mk.observed {
		obs[g] = o.Ready
	}
	s.mk.mu.Unlock()
	for w, b := range s.books {
		for _, g := range groupsOf(b) {
			ready, ok := obs[g]
			if ok && settleGroup(b, g, ready) {
				dirty[w] = true
			}
		}
	}
}

func groupsOf(b *Book) []actuate.Group {
	var out []actuate.Group
	for _, r := range b.Replicas {
		if g := r.group(b.Workload); !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// settleGroup makes the group's ready count match observed; it reports a change.
func settleGroup(b *Book, g actuate.Group, observed int) bool {
	var ready, launching []int
	reclaimed := 0
	for i, r := range b.Replicas {
		if r.group(b.Workload) != g {
			continue
		}
		switch r.State {
		case placement.StateReady:
			ready = append(ready, i)
		case placement.StateLaunching:
			launching = append(launching, i)
		case placement.StateReclaimed:
			reclaimed++
		}
	}
	bySince := func(a, c int) int { return b.Replicas[a].Since.Compare(b.Replicas[c].Since) }
	slices.SortStableFunc(ready, bySince)
	slices.SortStableFunc(launching, bySince)
	want := min(max(observed-reclaimed, 0), len(ready)+len(launching))
	changed := false
	for i := 0; len(ready) < want && i < len(launching); i++ {
		b.Replicas[launching[i]].State = placement.StateReady
		ready = append(ready, launching[i])
		changed = true
	}
	for len(ready) > want {
		b.Replicas[ready[len(ready)-1]].State = placement.StateLaunching
		ready = ready[:len(ready)-1]
		changed = true
	}
	return changed
}
