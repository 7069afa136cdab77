package alert

import (
	"slices"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/slack"
)

const (
	// lateGrace is how long after a reclaim's deadline a replacement still counts as its answer
	// (and is reported as late); after that the notice is forgotten.
	lateGrace = 30 * time.Minute
	// skew is how much earlier than the notice a replacement may be stamped: the notice carries
	// the collector's clock, the action the arbiter's.
	skew = time.Minute
)

// Reasons of a launch that answers a reclaim: a replacement, or on-demand standing in for spot.
const (
	reasonReclaim  = "reclaim"
	reasonFallback = "fallback"
	kindLaunch     = "launch"
)

// groupKey names the replicas of one workload on one offer at one location.
type groupKey struct {
	workload, location string
	market             events.Market
	offer              string
}

type groupState struct {
	ready int
	at    time.Time
}

// notice is a reclaim notice that falls on the fleet, waiting for its replacement to be ready.
type notice struct {
	e         *events.CapacityReclaimed
	workloads []string // those running at the notice's location when it came
	repl      *replacement
	missed    bool // the deadline passed and was announced
}

// replacement is an applied launch that answers reclaims: as many as it adds replicas. Its
// group is ready once it runs target replicas; a later action on the group (the reclaimed
// replica retired from it) moves the target.
type replacement struct {
	a      *events.ActionUpdated
	group  groupKey
	target int
	left   int
}

// planned is how many replicas a launch adds, as its plan said.
type planned struct {
	adds int
	at   time.Time
}

// reclaims pairs reclaim notices with the launches that replace them and the replica.state that
// shows the replacement ready. Events come from three streams and may arrive in any order, so
// each side waits for the other.
type reclaims struct {
	groups  map[groupKey]groupState
	notices map[string]*notice
	spare   []*replacement       // applied, not yet paired with as many notices as they add
	adds    map[string]planned   // launch action id -> replicas it adds, from plan.decided
	seen    map[string]time.Time // applied launch action ids, against re-sends
}

func newReclaims() *reclaims {
	return &reclaims{groups: map[groupKey]groupState{}, notices: map[string]*notice{}, adds: map[string]planned{},
		seen: map[string]time.Time{}}
}

// notice takes a reclaim notice that falls on a location where the fleet runs replicas. One
// that falls elsewhere (an instance not ours) is nobody's to replace.
func (r *reclaims) notice(e *events.CapacityReclaimed) []slack.Alert {
	if _, ok := r.notices[e.ID]; ok {
		return nil
	}
	var ws []string
	for k, g := range r.groups {
		if k.location == e.Location && g.ready > 0 && !slices.Contains(ws, k.workload) {
			ws = append(ws, k.workload)
		}
	}
	if len(ws) == 0 {
		return nil
	}
	slices.Sort(ws)
	r.notices[e.ID] = &notice{e: e, workloads: ws}
	return r.pair()
}

// plan learns how many replicas each replacement launch adds.
func (r *reclaims) plan(e *events.PlanDecided) {
	for _, a := range e.Actions {
		if a.Kind == kindLaunch && (a.Reason == reasonReclaim || a.Reason == reasonFallback) && a.Delta > 0 {
			r.adds[a.ID] = planned{adds: a.Delta, at: e.At}
		}
	}
}

// action takes an applied replacement launch, and follows later changes to the target of a
// replacement's group.
func (r *reclaims) action(e *events.ActionUpdated) []slack.Alert {
	if e.Status != events.ActionApplied {
		return nil
	}
	if _, ok := r.seen[e.ActionID]; ok {
		return nil
	}
	r.seen[e.ActionID] = e.At
	k := groupKey{workload: e.Workload, location: e.Location, market: e.Market, offer: e.Offer}
	if e.Kind != kindLaunch || (e.Reason != reasonReclaim && e.Reason != reasonFallback) {
		return r.retarget(k, e)
	}
	left := max(r.adds[e.ActionID].adds, 1)
	delete(r.adds, e.ActionID)
	r.spare = append(r.spare, &replacement{a: e, group: k, target: e.Replicas, left: left})
	return r.pair()
}

// retarget moves the target of the replacements on group k to what a later action asks for.
func (r *reclaims) retarget(k groupKey, e *events.ActionUpdated) []slack.Alert {
	var out []slack.Alert
	for _, n := range r.pending() {
		if n.repl != nil && n.repl.group == k && e.At.After(n.repl.a.At) {
			n.repl.target = e.Replicas
			out = append(out, r.ready(n)...)
		}
	}
	return out
}

// state records what a group runs; a replacement group reaching its target answers its notices.
func (r *reclaims) state(e *events.ReplicaState) []slack.Alert {
	k := groupKey{workload: e.Workload, location: e.Location, market: e.Market, offer: e.Offer}
	if old, ok := r.groups[k]; ok && e.At.Before(old.at) {
		return nil
	}
	r.groups[k] = groupState{ready: e.Ready, at: e.At}
	var out []slack.Alert
	for _, n := range r.pending() {
		if n.repl != nil && n.repl.group == k {
			out = append(out, r.ready(n)...)
		}
	}
	return out
}

// pair gives each unpaired notice, oldest first, the first spare replacement that can answer it.
func (r *reclaims) pair() []slack.Alert {
	var out []slack.Alert
	for _, n := range r.pending() {
		if n.repl != nil {
			continue
		}
		i := slices.IndexFunc(r.spare, func(p *replacement) bool { return answers(p, n) })
		if i < 0 {
			continue
		}
		p := r.spare[i]
		n.repl = p
		if p.left--; p.left == 0 {
			r.spare = slices.Delete(r.spare, i, i+1)
		}
		out = append(out, r.ready(n)...)
	}
	return out
}

func answers(p *replacement, n *notice) bool {
	at := p.a.At
	return slices.Contains(n.workloads, p.a.Workload) && !at.Before(n.e.NoticeAt.Add(-skew)) &&
		!at.After(n.e.Deadline.Add(lateGrace))
}

// ready announces n handled if its replacement's group is at the launch's target.
func (r *reclaims) ready(n *notice) []slack.Alert {
	g, ok := r.groups[n.repl.group]
	if !ok || n.repl.target <= 0 || g.ready < n.repl.target {
		return nil
	}
	delete(r.notices, n.e.ID)
	e, a := n.e, n.repl.a
	return []slack.Alert{slack.ReclaimHandled{Workload: a.Workload, Provider: e.Provider, Location: e.Location,
		Zone: e.Zone, Instance: e.Instance, Kind: e.Kind, NoticeAt: e.NoticeAt, Deadline: e.Deadline,
		Replacement: offerName(a), ReadyAt: g.at}}
}

// tick announces notices whose deadline passed with no replacement ready, once, and forgets
// notices, replacements and launches too old to be paired.
func (r *reclaims) tick(now time.Time) []slack.Alert {
	var out []slack.Alert
	for _, n := range r.pending() {
		switch {
		case now.After(n.e.Deadline.Add(lateGrace)):
			delete(r.notices, n.e.ID)
		case now.After(n.e.Deadline) && !n.missed:
			n.missed = true
			out = append(out, missed(n))
		}
	}
	r.spare = slices.DeleteFunc(r.spare, func(p *replacement) bool { return now.Sub(p.a.At) > lateGrace })
	for k, g := range r.groups { // no longer reported (a deployment removed): it runs nothing we know of
		if now.Sub(g.at) > 2*lateGrace {
			delete(r.groups, k)
		}
	}
	for id, at := range r.seen {
		if now.Sub(at) > 2*lateGrace {
			delete(r.seen, id)
		}
	}
	for id, p := range r.adds { // planned, never applied (held, rejected)
		if now.Sub(p.at) > 2*lateGrace {
			delete(r.adds, id)
		}
	}
	return out
}

// offerName names the replacement's offer with its location: the arbiter's offer ids
// (location/zone/instance type/market) already start with it.
func offerName(a *events.ActionUpdated) string {
	if strings.HasPrefix(a.Offer, a.Location+"/") {
		return a.Offer
	}
	return a.Location + "/" + a.Offer
}

func missed(n *notice) slack.Alert {
	e := n.e
	m := slack.ReclaimMissed{Workload: strings.Join(n.workloads, ", "), Provider: e.Provider, Location: e.Location,
		Zone: e.Zone, Instance: e.Instance, Kind: e.Kind, NoticeAt: e.NoticeAt, Deadline: e.Deadline}
	if n.repl != nil {
		m.Workload, m.Replacement = n.repl.a.Workload, offerName(n.repl.a)
	}
	return m
}

// pending lists the notices waiting, oldest notice first (ties by id), so pairing is deterministic.
func (r *reclaims) pending() []*notice {
	out := make([]*notice, 0, len(r.notices))
	for _, n := range r.notices {
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b *notice) int {
		if c := a.e.NoticeAt.Compare(b.e.NoticeAt); c != 0 {
			return c
		}
		return strings.Compare(a.e.ID, b.e.ID)
	})
	return out
}
