package arbiter

import (
	"slices"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/placement"
)

// truth is what the actuators last said each group holds, and which report said it. A report is
// numbered before the actuator is asked, so a report taken before an action reached the actuator
// is never mistaken for the actuator's answer to it.
type truth struct {
	seq     map[actuate.Group]uint64 // the report each group was last observed in
	applied map[actuate.Group]uint64 // the last report numbered before an action on the group ended
}

func newTruth() truth {
	return truth{seq: map[actuate.Group]uint64{}, applied: map[actuate.Group]uint64{}}
}

// absent lists the books' groups a complete report left out, as observed empty: an actuator that
// does not report a group holds nothing of it (a restarted sim, a Deployment deleted).
func (l *ledger) absent(obs []actuate.Observed) []actuate.Observed {
	seen := map[actuate.Group]bool{}
	for _, o := range obs {
		seen[o.Group] = true
	}
	var out []actuate.Observed
	for _, w := range l.workloadNames() {
		for _, g := range groupsOf(l.books[w]) {
			if !seen[g] && l.reports(g.Location) {
				out = append(out, actuate.Observed{Group: g})
			}
		}
	}
	return out
}

// reports says whether the actuator of location says what runs there.
func (l *ledger) reports(location string) bool {
	if r, ok := l.act.(actuate.Router); ok {
		_, rep := r[location].(actuate.Reporter)
		return rep
	}
	_, rep := l.act.(actuate.Reporter)
	return rep
}

// noteReport records that groups were observed in report seq.
func (l *ledger) noteReport(obs []actuate.Observed, seq uint64) {
	for _, o := range obs {
		l.truth.seq[o.Group] = max(l.truth.seq[o.Group], seq)
	}
}

// reconcile makes the books follow the actuators: a group that holds fewer replicas than its book,
// in a report made after the group's last action ended and with no action in flight on it, loses
// the excess from its book (launching replicas first, the newest first), so the planner replaces
// them instead of waiting for replicas that will never come; the book keeps the loss. A spot
// replica dropped so, with no notice, is recorded as ended: it was seen alive until now and nothing
// says it was reclaimed, so its survival still counts for the offer's hazard, as a drained one's
// does.
func (l *ledger) reconcile(now time.Time, dirty map[string]bool) {
	for _, w := range l.workloadNames() {
		b := l.books[w]
		for _, g := range groupsOf(b) {
			c, ok := l.reported[g]
			n := c.desired
			if !ok || l.truth.seq[g] <= l.truth.applied[g] || groupBusy(b, g) {
				continue
			}
			for excess := b.Count(g) - n; excess > 0; excess-- {
				i := newestLaunching(b, g, nil)
				if i < 0 {
					i = newestIn(b, g)
				}
				if st := b.Replicas[i].State; st == placement.StateLaunching || st == placement.StateReady {
					b.lose(lossVanished, now)
				}
				l.ended(b, []string{b.Replicas[i].ID}, now)
				b.Replicas = slices.Delete(b.Replicas, i, i+1)
				dirty[w] = true
			}
		}
	}
}

// groupBusy says whether an action on g is in flight: recorded or calling. One awaiting an
// approval has not touched the group's replicas, nor its actuator.
func groupBusy(b *Book, g actuate.Group) bool {
	return slices.ContainsFunc(b.Actions, func(r Record) bool { return r.Target.Group == g && r.Stage != StageAwaiting })
}

// newestIn is g's newest replica that is not draining.
func newestIn(b *Book, g actuate.Group) int {
	at := -1
	for i, r := range b.Replicas {
		if r.group(b.Workload) == g && r.State != placement.StateDraining && (at < 0 || !r.Since.Before(b.Replicas[at].Since)) {
			at = i
		}
	}
	return at
}
