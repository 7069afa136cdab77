package arbiter

import (
	"encoding/hex"
	"hash/fnv"
	"slices"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/placement"
)

// ReasonLaunchFailed is the reason of the action that gives up a launch which could not get
// capacity or was not ready within its location's launch timeout. It is announced as
// action.updated (kind retire), which the recorder keeps with every other action, and the
// reports count it by the same name.
const ReasonLaunchFailed = events.ReasonLaunchFailed

// defaultLaunchTimeout is how long a launch may take when its location sets no launch_timeout:
// three cold starts, and at least two minutes more than one.
func defaultLaunchTimeout(coldStart time.Duration) time.Duration {
	return max(3*coldStart, coldStart+2*time.Minute)
}

// launchTimeout is the launch timeout of workload w's replicas at location.
func (l *ledger) launchTimeout(location, workload string) time.Duration {
	if loc, ok := l.cfg.Location(location); ok && loc.Actuator.LaunchTimeout > 0 {
		return loc.Actuator.LaunchTimeout
	}
	cold := time.Duration(0)
	if w, ok := l.cfg.Workload(workload); ok {
		cold = w.ColdStart
	}
	return defaultLaunchTimeout(cold)
}

// giveUp drops the launching replicas that will not come: those the actuator reports pending for
// want of capacity (the newest of their group), and those not ready within their launch timeout.
// Each one leaves the book, is recorded as a launch_failed observation of its offer (the planner's
// hazard and ranking learn from it) and gets an action lowering its group's count, so the
// next plan places the replica elsewhere at once and nothing stays launching. A move for price
// whose launches all failed leaves the workload's cooldown as it was before.
func (l *ledger) giveUp(now time.Time, dirty map[string]bool) {
	for _, w := range l.workloadNames() {
		b := l.books[w]
		var moved []actuate.Group // groups where a launch of the last move was given up
		for _, g := range groupsOf(b) {
			p := l.reported[g].noCapacity
			for _, st := range l.stuck(b, g, p.n, p.at, now) {
				if b.lastMove(b.Replicas[st.i]) {
					moved = append(moved, g)
				}
				l.abandon(b, st, now)
				dirty[w] = true
			}
			b.Replicas = slices.DeleteFunc(b.Replicas, func(r Rep) bool { return r.State == abandoned })
		}
		if len(moved) > 0 && !b.heldMove(moved) {
			// The last move got no capacity anywhere: it moved nothing, and the cooldown, which
			// keeps a workload from flapping between offers, is the previous move's again.
			b.LastMoveAt = b.PrevMoveAt
		}
	}
}

// lastMove says whether r was launched by the workload's last move for price.
func (b *Book) lastMove(r Rep) bool { return r.Move && r.Since.Equal(b.LastMoveAt) }

// heldMove says whether the last move still holds a replica: one it launched, or one launched
// with it in a group where one of its launches was given up (an actuator sets a count, so which
// of a group's launches got capacity is not the book's to say).
func (b *Book) heldMove(moved []actuate.Group) bool {
	return slices.ContainsFunc(b.Replicas, func(r Rep) bool {
		return r.Since.Equal(b.LastMoveAt) && (r.Move || slices.Contains(moved, r.group(b.Workload)))
	})
}

// abandoned marks, within giveUp, a replica being dropped from its book.
const abandoned placement.ReplicaState = "abandoned"

type pendingReport struct {
	n  int
	at time.Time
}

// stuckLaunch is a launching replica to give up: its index in the book, and when its launch is
// known to have failed.
type stuckLaunch struct {
	i      int
	failed time.Time
}

// stuck lists g's launching replicas to give up: the newest pending ones whose launch the
// actuator had when it reported, and any past its launch timeout. A replica whose launch action
// has not reached the actuator yet is never stuck. A pending launch failed when it was made: it
// found no capacity then (the actuator would have started it otherwise), as the replay's clamp
// refuses a launch in the tick it is made; one that timed out failed now.
func (l *ledger) stuck(b *Book, g actuate.Group, pending int, reportedAt, now time.Time) []stuckLaunch {
	var launching []int
	for i, r := range b.Replicas {
		if r.group(b.Workload) == g && r.State == placement.StateLaunching && !inFlight(b, r.ID) {
			launching = append(launching, i)
		}
	}
	if len(launching) == 0 {
		return nil
	}
	slices.SortStableFunc(launching, func(x, y int) int { return b.Replicas[y].Since.Compare(b.Replicas[x].Since) })
	timeout := l.launchTimeout(g.Location, b.Workload)
	var out []stuckLaunch
	for _, i := range launching {
		r := b.Replicas[i]
		if pending > 0 && r.Since.Before(reportedAt) {
			pending--
			out = append(out, stuckLaunch{i, r.Since})
		} else if now.Sub(r.Since) >= timeout {
			out = append(out, stuckLaunch{i, now})
		}
	}
	return out
}

// inFlight says whether replica id is launched by an action not finished yet.
func inFlight(b *Book, id string) bool {
	return slices.ContainsFunc(b.Actions, func(rec Record) bool {
		return slices.ContainsFunc(rec.Launch, func(r Rep) bool { return r.ID == id })
	})
}

// abandon gives up a stuck replica: the observation, the action lowering its group and its
// announcement. The replica is marked abandoned; the caller removes it.
func (l *ledger) abandon(b *Book, st stuckLaunch, now time.Time) {
	r := &b.Replicas[st.i]
	if !r.Move { // a move that found no capacity lost nothing the workload had
		b.lose(ReasonLaunchFailed, now)
	}
	r.State = abandoned
	ob := placement.Observation{At: st.failed, Kind: placement.ObsLaunchFailed}
	l.mk.learn(r.Offer, ob)
	l.resp.observe(r.Offer, ob)
	g := r.group(b.Workload)
	id := giveUpID(b.Workload, r.ID)
	if b.finished(id) {
		return
	}
	rec := Record{Target: actuate.Target{ActionID: id, Group: g, Offer: r.Offer, Replicas: b.Count(g),
		Kind: "retire", Reason: ReasonLaunchFailed}, PlanID: planID(now, b.Workload), Stage: StageRecorded, At: now,
		CostPerHour: -r.PricePerHour}
	b.Actions = append(b.Actions, rec)
	l.m.actions.WithLabelValues("launch", ReasonLaunchFailed).Inc()
	l.ann.announce(rec, b.Workload, statusOf(StageRecorded), "replica "+r.ID+" got no capacity at "+g.Location+
		" (pending, or not ready within "+l.launchTimeout(g.Location, b.Workload).String()+"): given up")
}

func giveUpID(workload, replica string) string {
	h := fnv.New128a()
	h.Write([]byte("give-up\x00" + workload + "\x00" + replica))
	return hex.EncodeToString(h.Sum(nil))
}
