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

// planInput is what a full pass plans from, taken under s.mu: the snapshot, and what of the books
// it read (replicas in snapshot order, each workload's last move, the lead), to tell at the end
// whether the books changed meanwhile.
type planInput struct {
	snap  placement.Snapshot
	reps  []placement.Replica
	moves []time.Time
	lead  uint64
}

// full re-plans the whole estate. Planning 1,000 workloads takes far longer than answering a
// reclaim, so the plan is computed without holding the books: a reclaim arriving meanwhile is
// answered at once by quick. The plan is applied only if the books it was made from are unchanged;
// otherwise it is thrown away and made again, never applied over newer books. The budget caps are
// read after the books are taken, without holding them (they may come from a slow store). Full
// passes run one at a time.
func (s *Service) full(ctx context.Context, trigger string, start time.Time) {
	s.planMu.Lock()
	defer s.planMu.Unlock()
	for try := 1; ; try++ {
		now := s.o.Clock.Now()
		if try >= lockedAfter {
			s.fullLocked(ctx, trigger, s.caps(ctx), now, start)
			return
		}
		in, ok := s.prepare(now)
		if !ok {
			return
		}
		in.snap.Budgets = s.caps(ctx)
		pl, err := placement.NewPlannerContext(ctx, in.snap, s.o.Policy, now)
		if err != nil {
			s.log.Info("planning stopped", "trigger", trigger, "err", err)
			return
		}
		d := pl.Decision()
		if s.install(ctx, in, pl, d, now, trigger, start) {
			return
		}
		s.m.dropped.Inc()
		s.log.Debug("the books changed while planning; planning again", "trigger", trigger, "try", try)
	}
}

// caps are the budget caps the plan must respect; none when they cannot be read.
func (s *Service) caps(ctx context.Context) []placement.Budget {
	caps, err := s.o.Caps.Caps(ctx)
	if err != nil {
		s.log.Warn("budget caps unavailable; planning without them", "err", err)
	}
	return caps
}

// prepare settles the books, touches what settling changed and takes the plan's input (its
// budgets still to fill). It reports false when this arbiter does not lead.
func (s *Service) prepare(now time.Time) (planInput, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.leading {
		return planInput{}, false
	}
	s.touchAll(s.settle(now))
	snap := s.snapshot(now, nil)
	in := planInput{snap: snap, reps: slices.Clone(snap.Replicas), lead: s.lead}
	for i := range s.o.Config.Workloads {
		var at time.Time
		if b := s.books[s.o.Config.Workloads[i].Name]; b != nil {
			at = b.LastMoveAt
		}
		in.moves = append(in.moves, at)
	}
	return in, true
}

// install applies a plan made from in if the books are still as in saw them. It reports false
// when they changed (the plan is dropped), true when it is applied or there is nothing to do.
func (s *Service) install(ctx context.Context, in planInput, pl *placement.Planner, d placement.Decision,
	now time.Time, trigger string, start time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.leading {
		return true
	}
	if s.lead != in.lead || !s.unchanged(in) {
		return false
	}
	s.setPlanner(pl, in.reps, in.snap.Workloads)
	s.commit(ctx, d, now, map[string]bool{}, s.activeJobs(), trigger, start)
	s.unplaced.warn(s.log, d)
	return true
}

// unchanged says whether the books' replicas and last moves are those in was planned from; s.mu
// is held.
func (s *Service) unchanged(in planInput) bool {
	k := 0
	for i := range s.o.Config.Workloads {
		w := s.o.Config.Workloads[i].Name
		b := s.books[w]
		if s.o.Config.Workloads[i].IsJob() {
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

// fullLocked plans the whole estate while holding the books, as the last resort of full.
func (s *Service) fullLocked(ctx context.Context, trigger string, caps []placement.Budget, now, start time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.leading {
		return
	}
	dirty := s.settle(now)
	snap := s.snapshot(now, caps)
	reps := slices.Clone(snap.Replicas)
	pl, err := placement.NewPlannerContext(ctx, snap, s.o.Policy, now)
	if err != nil {
		s.log.Info("planning stopped", "trigger", trigger, "err", err)
		return
	}
	s.setPlanner(pl, reps, snap.Workloads)
	d := pl.Decision()
	s.commit(ctx, d, now, dirty, s.activeJobs(), trigger, start)
	s.unplaced.warn(s.log, d)
}
