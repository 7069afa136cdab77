package arbiter

import (
	"context"
	"encoding/hex"
	"hash/fnv"
	"slices"
	"strconv"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/placement"
)

// pass is one planning round, run only while leading: bring the books up to date with what was
// observed, plan, record the actions and hand them to the workers. A reclaim is answered from the
// planner the last full pass left (quick); every other pass re-plans the whole estate (full).
func (s *Service) pass(ctx context.Context, trigger string) {
	if !s.mayPlan() {
		return
	}
	start := time.Now()
	if trigger == "reclaim" && s.quick(ctx, trigger, start) {
		return
	}
	s.full(ctx, trigger, start)
}

// answer is the loop's pass after a reclaim: quick, or, with no planner yet to answer from (the
// first pass after taking the lead), a full pass run by planLoop, so that the loop goes on
// renewing the lease while a large estate is planned.
func (s *Service) answer(ctx context.Context) {
	if !s.mayPlan() {
		return
	}
	if !s.quick(ctx, "reclaim", time.Now()) {
		s.requestFull("reclaim")
	}
}

// mayPlan says whether this arbiter leads and has folded its inputs' backlog.
func (s *Service) mayPlan() bool {
	if !s.Leading() {
		return false
	}
	if n := s.in.behind.Load(); n > 0 {
		s.log.Debug("not planning yet: still reading the backlog", "inputs_behind", n)
		return false
	}
	return true
}

// quick answers a reclaim from the planner of the last full pass (the responder), brought up to
// date with what changed in the books since (Planner.Apply re-plans only the workloads that
// touches, and only the jobs whose books settling changed are planned again: a reclaim re-plans
// the jobs it hit, not every job; the next full pass plans them all); its prices are at most one
// debounce old, and the debounced full pass that follows any price change catches up. It holds
// the books only briefly, and never waits for a full plan being computed. It reports false,
// having done nothing, when there is no planner yet.
func (s *Service) quick(ctx context.Context, trigger string, start time.Time) bool {
	now := s.o.Clock.Now()
	answered := true
	var holds []Hold
	s.bk.with(func(l *ledger) {
		if !l.leading {
			return
		}
		if !l.resp.ready() {
			answered = false
			return
		}
		dirty := l.settle(now)
		d := l.resp.answer(l.books, l.isJob, now)
		holds = l.commit(ctx, d, now, dirty, l.touchedJobs(dirty), trigger, start)
	})
	s.bk.askWhenSaved(ctx, holds)
	return answered
}

// commit records a decision's actions, with those of the jobs planned now (act), touches the
// changed books and hands them to the workers. It returns the new holds, to ask about once their
// books are durable (books.askWhenSaved).
func (l *ledger) commit(ctx context.Context, d placement.Decision, now time.Time, dirty map[string]bool, act []*job,
	trigger string, start time.Time) []Hold {
	d.Actions = append(d.Actions, l.planJobs(act, now)...)
	n, holds := l.record(ctx, d, now, dirty)
	l.touchAll(dirty)
	for w, b := range l.books {
		if !dirty[w] && runnable(b) {
			l.exec.dispatch(w)
		}
	}
	l.m.planDur.Observe(time.Since(start).Seconds())
	if n > 0 {
		l.m.decisions.WithLabelValues(trigger).Inc()
		l.log.Debug("planned", "trigger", trigger, "actions", n, "took", time.Since(start))
	}
	return holds
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// snapshot is the planner's view: the fleet's locations, the offers seen in price events, the
// workloads with their demand, and the replicas the books hold.
func (l *ledger) snapshot(now time.Time, caps []placement.Budget) placement.Snapshot {
	cfg := l.cfg
	var snap placement.Snapshot
	for _, loc := range cfg.Locations {
		snap.Locations = append(snap.Locations, placement.Location{ID: loc.Name, Provider: loc.Provider, Region: loc.Region,
			Zone: firstOr(loc.Zones, loc.Name), Residency: loc.Residency, EgressPerGB: loc.EgressPerGB, Capacity: loc.Capacity})
	}
	snap.Offers = l.mk.offers.all()
	l.mk.withHistory(snap.Offers, now)
	for i := range cfg.Workloads {
		w := &cfg.Workloads[i]
		if w.IsJob() {
			continue // jobs are planned by planJobs
		}
		pw := workload(w)
		b := l.books[w.Name]
		ready := 0
		if b != nil {
			pw.LastMoveAt = b.LastMoveAt
			for _, r := range b.Replicas {
				snap.Replicas = append(snap.Replicas, placement.Replica{ID: r.ID, Workload: w.Name, Offer: r.Offer,
					State: r.State, Since: r.Since, Deadline: r.Deadline})
				if r.State == placement.StateReady {
					ready++
				}
			}
		}
		if pw.Throughput != nil {
			pw.DemandRate = l.sizingRate(w, now)
		} else {
			pw.Demand = l.mk.demand(w, ready, now)
		}
		snap.Workloads = append(snap.Workloads, pw)
	}
	snap.Budgets = caps
	return snap
}

// workload turns a fleet workload into the planner's.
func workload(w *fleet.Workload) placement.Workload {
	pw := placement.Workload{ID: w.Name, Team: w.Team, GPUModels: w.GPU.Models, MinGPUMemoryGB: w.GPU.MinMemoryGB,
		GPUsPerReplica: w.GPU.Count, MinReplicas: w.Replicas.Min, MaxReplicas: w.Replicas.Max,
		MinLocations: w.MinLocations, Residency: w.Residency, WeightsGB: w.WeightsGB, ColdStart: w.ColdStart}
	for _, m := range w.Markets {
		pw.Markets = append(pw.Markets, placement.Market(m))
	}
	if w.SizedByThroughput() && len(w.Serving.PerReplica) > 0 {
		// The fleet's own map: the planner only reads it, and a full pass makes this for every
		// workload.
		pw.Throughput, pw.RateUnit = w.Serving.PerReplica, rateUnit[w.Scaling.Metric]
	}
	pw.AvailabilityTarget, _ = w.AvailabilityTarget()
	return pw
}

// rateUnit names a throughput metric's unit in the planner's explanations.
var rateUnit = map[string]string{fleet.MetricTokens: "tokens/s", fleet.MetricOutputTokens: "output tokens/s",
	fleet.MetricRequests: "requests/s"}

// sizingRate is the rate a workload sized by throughput is planned for: what its forecast expects
// over the next cold start, or its current rate if more (demand.go). The forecast's error is
// exported as it is read.
func (l *ledger) sizingRate(w *fleet.Workload, now time.Time) float64 {
	rate, mape, n, ok := l.mk.demandRate(w, now)
	if n > 0 {
		l.m.forecastMAPE.WithLabelValues(w.Name).Set(mape)
	}
	if !ok {
		return 0
	}
	return rate
}

func firstOr(xs []string, def string) string {
	if len(xs) > 0 {
		return xs[0]
	}
	return def
}

// historyMemory is how long reclaim observations inform the hazard estimate.
const historyMemory = 24 * time.Hour

func forget(h []placement.Observation, now time.Time) []placement.Observation {
	return slices.DeleteFunc(h, func(o placement.Observation) bool { return now.Sub(o.At) > historyMemory })
}

// workloadNames are the books' workloads in name order; the slice is not to be
// changed. While leading, books are only added (book), so the sorted list is kept until their
// number changes; taking or losing the lead forgets it.
func (l *ledger) workloadNames() []string {
	if len(l.names) != len(l.books) {
		l.names = sortedKeys(l.books)
	}
	return l.names
}

func (l *ledger) book(workload string) *Book {
	b, ok := l.books[workload]
	if !ok {
		b = &Book{Workload: workload}
		l.books[workload] = b
	}
	return b
}

// toRecord builds the record of action a: which group it scales and to what. The target count is
// computed when the action is enacted. draining are the replicas drains recorded earlier in the
// same proposal will take: a second drain of a group picks others (scaleDownOrder).
func (l *ledger) toRecord(b *Book, a placement.Action, now time.Time, draining map[string]bool) (Record, bool) {
	rec := Record{Target: actuate.Target{ActionID: a.ID, Group: actuate.Group{Workload: a.Workload}, Offer: a.Offer,
		Kind: string(a.Kind), Reason: string(a.Reason)}, PlanID: planID(now, a.Workload), Stage: StageRecorded,
		NeedsApproval: a.NeedsApproval, CostPerHour: a.CostPerHour, At: now}
	switch a.Kind {
	case placement.ActionLaunch:
		off, ok := l.mk.offers.get(a.Offer)
		if !ok {
			return rec, false
		}
		rec.Target.Location, rec.Target.Market = off.Location, events.Market(off.Market)
		for i := range a.Count {
			rec.Launch = append(rec.Launch, Rep{ID: a.ID[:16] + "-" + strconv.Itoa(i), Offer: off.ID, Location: off.Location,
				Market: events.Market(off.Market), State: placement.StateLaunching, Since: now, PricePerHour: off.PricePerHour})
		}
		if a.Reason == placement.ReasonReclaim || a.Reason == placement.ReasonFallback {
			rec.Received = l.noticeReceived(b)
		}
	case placement.ActionDrain:
		if len(a.Replicas) == 0 {
			return rec, false
		}
		rec.Drain = a.Replicas
		for _, r := range b.Replicas {
			if r.ID == a.Replicas[0] {
				rec.Target.Location, rec.Target.Market = r.Location, r.Market
			}
		}
		if rec.Target.Location == "" {
			return rec, false
		}
		rec.Drain = scaleDownOrder(b, rec.Target.Group, rec.Drain, draining)
		for _, id := range rec.Drain {
			draining[id] = true
		}
	default: // a budget cut below the minimum: it awaits approval, then drains (see cut)
		rec.Target.Replicas = a.Count
		v := cutVictims(b, a.Count)
		if len(v) == 0 {
			return rec, false
		}
		rec.Target.Location, rec.Target.Market, rec.Target.Offer = v[0].Location, v[0].Market, v[0].Offer
	}
	return rec, true
}

// scaleDownOrder is which of group g's replicas a drain of the replicas ids removes. An actuator
// sets a count, and lowering it removes the instances it picks, as a ReplicaSet does: those not
// ready first, then the newest. The book drains the same ones, so the ages it keeps (and the
// survival it records) are those of the instances left. ids is kept when it spans other groups.
// Replicas in taken are left out: an earlier drain of the same proposal takes them.
func scaleDownOrder(b *Book, g actuate.Group, ids []string, taken map[string]bool) []string {
	var cands []Rep
	for _, r := range b.Replicas {
		if slices.Contains(ids, r.ID) && r.group(b.Workload) != g {
			return ids
		}
		if r.group(b.Workload) == g && !taken[r.ID] && (r.State == placement.StateReady || r.State == placement.StateLaunching) {
			cands = append(cands, r)
		}
	}
	slices.SortStableFunc(cands, func(x, y Rep) int {
		if rx, ry := x.State == placement.StateReady, y.State == placement.StateReady; rx != ry {
			if rx {
				return 1
			}
			return -1
		}
		return y.Since.Compare(x.Since)
	})
	if len(cands) < len(ids) {
		return ids
	}
	out := make([]string, len(ids))
	for i := range ids {
		out[i] = cands[i].ID
	}
	return out
}

// enact applies a record's effect on the book's replicas and fixes its target count.
func (l *ledger) enact(b *Book, rec *Record, now time.Time) {
	switch rec.Target.Kind {
	case string(placement.ActionLaunch):
		move := rec.Target.Reason == string(placement.ReasonCheaperOffer)
		for i := range rec.Launch {
			rec.Launch[i].Since = now // launching from now: an approval may have held it a while
			rec.Launch[i].Move = move
		}
		b.Replicas = append(b.Replicas, rec.Launch...)
		if move && !b.LastMoveAt.Equal(now) { // one move may launch on several offers
			b.PrevMoveAt, b.LastMoveAt = b.LastMoveAt, now
		}
	case string(placement.ActionDrain):
		for i := range b.Replicas {
			if slices.Contains(rec.Drain, b.Replicas[i].ID) {
				b.Replicas[i].State = placement.StateDraining
			}
		}
	}
	rec.Stage = StageRecorded
	rec.Target.Replicas = b.Count(rec.Target.Group)
}

// noticeReceived is when the earliest reclaim notice of b's reclaimed replicas reached us.
func (l *ledger) noticeReceived(b *Book) time.Time {
	var ids []string
	for _, r := range b.Replicas {
		if r.State == placement.StateReclaimed {
			ids = append(ids, r.Notice)
		}
	}
	return l.mk.firstReceived(ids)
}

func (l *ledger) cost(b *Book) float64 {
	c := 0.0
	for _, r := range b.Replicas {
		c += r.PricePerHour
	}
	return c
}

func planID(now time.Time, workload string) string {
	h := fnv.New64a()
	h.Write([]byte(now.UTC().Format(time.RFC3339Nano)))
	h.Write([]byte{0})
	h.Write([]byte(workload))
	return hex.EncodeToString(h.Sum(nil))
}

func statusOf(st Stage) events.ActionStatus {
	if st == StageAwaiting {
		return events.ActionAwaitingApproval
	}
	return events.ActionProposed
}
