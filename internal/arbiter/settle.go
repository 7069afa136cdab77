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

// settle brings the books up to date with what happened since the last pass: reclaim notices mark
// replicas reclaimed, replicas past their reclaim deadline are retired, what the actuators report
// drops what they do not hold and promotes launching replicas, and launches that cannot get
// capacity are given up; what was lost so is kept in the book (Lost) until restored. It returns the
// workloads whose books changed.
func (l *ledger) settle(now time.Time) map[string]bool {
	dirty := map[string]bool{}
	if c, ver, changed := l.mk.countsSince(l.reportedVer); changed {
		l.reported, l.reportedVer = c, ver
	}
	l.applyNotices(now, dirty)
	l.checkpoints(now, dirty)
	l.retire(now, dirty)
	l.reconcile(now, dirty)
	l.promote(dirty)
	l.giveUp(now, dirty)
	l.forgetLosses(now, dirty)
	return dirty
}

// applyNotices marks reclaimed the replicas each notice takes that no book has applied yet. A
// notice names an instance or node; the actuators' reports say which groups run there (a node may
// run replicas of several workloads, and several of one group), and it takes each of them. Without
// a match, at a location whose actuator names no instances, the notice falls on one ready spot
// replica there (groups in name order), since a provider reclaims spot capacity only.
func (l *ledger) applyNotices(now time.Time, dirty map[string]bool) {
	applied := map[string]map[string]bool{} // notice id → the workloads whose books applied it
	for w, b := range l.books {
		for _, n := range b.Notices {
			if applied[n] == nil {
				applied[n] = map[string]bool{}
			}
			applied[n][w] = true
		}
	}
	todo := l.mk.liveNotices(now)
	slices.SortFunc(todo, func(a, b notice) int { return cmp.Or(a.e.NoticeAt.Compare(b.e.NoticeAt), cmp.Compare(a.e.ID, b.e.ID)) })
	for _, n := range todo {
		for _, h := range l.victims(n, !n.e.Deadline.After(now), applied[n.e.ID]) {
			h.b.lose(lossReclaim, now)
			l.reclaimed(h.b, h.i, n)
			dirty[h.b.Workload] = true
		}
	}
}

// reclaimed marks b's replica i taken by notice n and records the preemption for the hazard.
func (l *ledger) reclaimed(b *Book, i int, n notice) {
	r := &b.Replicas[i]
	r.State, r.Deadline, r.Notice = placement.StateReclaimed, n.e.Deadline, n.e.ID
	if !slices.Contains(b.Notices, n.e.ID) {
		b.Notices = append(b.Notices, n.e.ID)
		if len(b.Notices) > maxDone {
			b.Notices = slices.Clone(b.Notices[len(b.Notices)-maxDone:])
		}
	}
	ob := placement.Observation{At: n.e.NoticeAt, Kind: placement.ObsPreempted, Lived: n.e.NoticeAt.Sub(r.Since)}
	l.mk.learn(r.Offer, ob)
	l.resp.observe(r.Offer, ob)
}

// hit is one replica a notice takes: b's replica i.
type hit struct {
	b *Book
	i int
}

// occupant is a group on a noticed instance: how many of its replicas run there, and whether it
// was last reported still starting there.
type occupant struct {
	g        actuate.Group
	n        int
	starting bool
}

// victims finds the replicas a notice takes, skipping the workloads in done (their books applied
// it already). In each group running the named instance, as many replicas as the group runs there:
// the newest launching ones when the instance was still starting, else the ready replicas launched
// last before the instance was first reported, or else the oldest ready ones. With no such group
// and no book having applied it, unless exact, one guess: in the spot groups at the notice's
// location, the oldest ready replica there. A notice past its deadline is applied exactly or not
// at all: a guess would take a replica that was launched after the loss. Where the actuator names
// its instances, a notice for one it does not name struck something else and takes nothing (it
// stays, in case a later report names it).
func (l *ledger) victims(n notice, exact bool, done map[string]bool) []hit {
	there, first, named := l.mk.occupants(n)
	var out []hit
	for _, o := range there {
		b := l.books[o.g.Workload]
		if b == nil || done[o.g.Workload] {
			continue
		}
		taken := map[int]bool{}
		for range o.n {
			i := launchedBefore(b, o.g, first, taken)
			if i < 0 || o.starting {
				i = pick(b, o.g, o.starting, taken)
			}
			if i < 0 {
				break
			}
			taken[i] = true
			out = append(out, hit{b, i})
		}
	}
	if len(out) > 0 || exact || named || len(done) > 0 {
		return out
	}
	for _, w := range l.workloadNames() {
		b := l.books[w]
		g := actuate.Group{Workload: w, Location: n.e.Location, Market: "spot"}
		if i := oldestReady(b, g, nil); i >= 0 {
			return []hit{{b, i}}
		}
	}
	return nil
}

func count(xs []string, x string) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}

// launchedBefore is the ready replica of g that an instance first reported at first runs: the
// one launched last before then, since an instance is reported only after its launch. It is -1
// when no ready replica of g was launched before first. Replicas in taken are skipped.
func launchedBefore(b *Book, g actuate.Group, first time.Time, taken map[int]bool) int {
	at := -1
	for i, r := range b.Replicas {
		if !taken[i] && r.group(b.Workload) == g && r.State == placement.StateReady && !r.Since.After(first) &&
			(at < 0 || !r.Since.Before(b.Replicas[at].Since)) {
			at = i
		}
	}
	return at
}

// pick is the replica of g a notice for one of its instances takes: the newest launching one for
// an instance still starting, else the oldest ready one; either falls back on the other.
func pick(b *Book, g actuate.Group, starting bool, taken map[int]bool) int {
	if starting {
		if i := newestLaunching(b, g, taken); i >= 0 {
			return i
		}
		return oldestReady(b, g, taken)
	}
	if i := oldestReady(b, g, taken); i >= 0 {
		return i
	}
	return newestLaunching(b, g, taken)
}

func newestLaunching(b *Book, g actuate.Group, taken map[int]bool) int {
	at := -1
	for i, r := range b.Replicas {
		if !taken[i] && r.group(b.Workload) == g && r.State == placement.StateLaunching && (at < 0 || !r.Since.Before(b.Replicas[at].Since)) {
			at = i
		}
	}
	return at
}

func oldestReady(b *Book, g actuate.Group, taken map[int]bool) int {
	at := -1
	for i, r := range b.Replicas {
		if !taken[i] && r.group(b.Workload) == g && r.State == placement.StateReady && (at < 0 || r.Since.Before(b.Replicas[at].Since)) {
			at = i
		}
	}
	return at
}

// retire removes reclaimed replicas whose deadline has passed and records an action lowering
// their group's count, so the actuator does not bring the lost replica back on its own.
func (l *ledger) retire(now time.Time, dirty map[string]bool) {
	for _, w := range l.workloadNames() {
		b := l.books[w]
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
				Replicas: b.Count(g), Kind: "retire", Reason: string(placement.ReasonReclaim)},
				PlanID: planID(now, w), Stage: StageRecorded, At: now, CostPerHour: -r.PricePerHour})
			l.ann.announce(b.Actions[len(b.Actions)-1], w, statusOf(StageRecorded), "reclaimed replica "+r.ID+" is gone")
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
func (l *ledger) promote(dirty map[string]bool) {
	for w, b := range l.books {
		for _, g := range groupsOf(b) {
			c, ok := l.reported[g]
			if ok && settleGroup(b, g, c.ready) {
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
