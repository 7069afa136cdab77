package arbiter

import (
	"context"
	"slices"
	"time"

	"github.com/bursar-dev/bursar/internal/placement"
)

// lockedAfter is the try at which a full pass stops planning optimistically and plans while
// holding the books, so that books changing under every try cannot starve it.
const lockedAfter = 3

// planInput is what a full pass plans from, taken under the books' lock: the snapshot, and what
// of the books it read (replicas in snapshot order, each workload's last move, the lead), to tell
// at the end whether the books changed meanwhile.
type planInput struct {
	snap  placement.Snapshot
	reps  []placement.Replica
	moves []time.Time
	lead  uint64
}

// prepare settles the books, touches what settling changed and takes the plan's input (its
// budgets still to fill). It reports false when this arbiter does not lead.
func (l *ledger) prepare(now time.Time) (planInput, bool) {
	if !l.leading {
		return planInput{}, false
	}
	l.touchAll(l.settle(now))
	snap := l.snapshot(now, nil)
	in := planInput{snap: snap, reps: slices.Clone(snap.Replicas), lead: l.lead}
	for i := range l.cfg.Workloads {
		var at time.Time
		if b := l.books[l.cfg.Workloads[i].Name]; b != nil {
			at = b.LastMoveAt
		}
		in.moves = append(in.moves, at)
	}
	return in, true
}

// install applies a plan made from in if the books are still as in saw them, and returns the new
// holds. It reports false when they changed (the plan is dropped), true when it is applied or
// there is nothing to do.
func (l *ledger) install(ctx context.Context, in planInput, pl *placement.Planner, d placement.Decision,
	now time.Time, trigger string, start time.Time) (holds []Hold, done bool) {
	if !l.leading {
		return nil, true
	}
	if l.lead != in.lead || !l.unchanged(in) {
		return nil, false
	}
	l.resp.keep(pl, in.reps, in.snap.Workloads)
	return l.commit(ctx, d, now, map[string]bool{}, l.activeJobs(), trigger, start), true
}

// unchanged says whether the books' replicas and last moves are those in was planned from.
func (l *ledger) unchanged(in planInput) bool {
	k := 0
	for i := range l.cfg.Workloads {
		w := l.cfg.Workloads[i].Name
		b := l.books[w]
		if l.cfg.Workloads[i].IsJob() {
			continue // not in the serving plan
		}
		if b == nil {
			if !in.moves[i].IsZero() {
				return false
			}
			continue
		}
		if !b.LastMoveAt.Equal(in.moves[i]) {
			return false
		}
		for _, r := range b.Replicas {
			pr := placement.Replica{ID: r.ID, Workload: w, Offer: r.Offer, State: r.State, Since: r.Since, Deadline: r.Deadline}
			if k >= len(in.reps) || in.reps[k] != pr {
				return false
			}
			k++
		}
	}
	return k == len(in.reps)
}

// fullLocked plans the whole estate while holding the books, as the last resort of full. It
// returns the decision (ok false when it made none) and the new holds.
func (l *ledger) fullLocked(ctx context.Context, trigger string, caps []placement.Budget, now, start time.Time) (
	d placement.Decision, holds []Hold, ok bool) {
	if !l.leading {
		return d, nil, false
	}
	dirty := l.settle(now)
	snap := l.snapshot(now, caps)
	reps := slices.Clone(snap.Replicas)
	pl, err := placement.NewPlannerContext(ctx, snap, l.policy, now)
	if err != nil {
		l.log.Info("planning stopped", "trigger", trigger, "err", err)
		return d, nil, false
	}
	l.resp.keep(pl, reps, snap.Workloads)
	d = pl.Decision()
	return d, l.commit(ctx, d, now, dirty, l.activeJobs(), trigger, start), true
}
