package arbiter

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/placement"
)

// candidate is a new action of a pass, recorded once the gate has ruled on the pass.
type candidate struct {
	a   placement.Action
	rec Record
}

// record turns a decision into records in the books. The pass's new actions are put to the gate
// together; allowed actions change the book's replicas at once (launches appear as launching,
// drains as draining), so the next plan builds on them; actions the gate holds wait for their
// approval, which is recorded with them. It returns how many actions it recorded and the new
// holds, to ask once the books are saved.
func (l *ledger) record(ctx context.Context, d placement.Decision, now time.Time, dirty map[string]bool) (int, []Hold) {
	var restores map[string]bool
	d.Actions, restores = l.restoring(d.Actions)
	cands, prop := l.propose(d, restores, now)
	if len(cands) == 0 {
		l.decided(d)
		return 0, nil
	}
	ruling, err := l.gate.Review(ctx, prop)
	if err != nil {
		l.log.Warn("gate failed; nothing of this pass is applied, the next pass proposes it again", "err", err)
		return 0, nil
	}
	holds := l.makeHolds(ruling.Holds, cands, prop, now)
	heldBy := map[string]string{}
	for _, h := range holds {
		for _, id := range h.Actions {
			heldBy[id] = h.ID
		}
	}
	n := 0
	for _, c := range cands {
		b, rec := l.book(c.a.Workload), c.rec
		switch {
		case slices.Contains(ruling.Blocked, c.a.ID):
			l.m.actions.WithLabelValues(string(c.a.Kind), "blocked").Inc()
			continue
		case heldBy[c.a.ID] != "":
			rec.Stage, rec.Hold = StageAwaiting, heldBy[c.a.ID]
			l.m.actions.WithLabelValues(string(c.a.Kind), "awaiting_approval").Inc()
		default:
			l.enact(b, &rec, now)
		}
		b.Actions = append(b.Actions, rec)
		dirty[c.a.Workload] = true
		n++
		l.ann.announce(rec, c.a.Workload, statusOf(rec.Stage), "")
	}
	holds = append(holds, l.askAfter(ruling.Told, cands, prop, now, dirty)...)
	for _, h := range holds {
		for _, w := range h.Workloads() {
			b := l.book(w)
			b.Holds = append(b.Holds, h)
			dirty[w] = true
		}
	}
	l.decided(d)
	return n, holds
}

// propose gathers the decision's new actions by workload: those not done or recorded already,
// not like one waiting for approval or one rejected lately, and with something to act on. A
// restore of lost capacity is kept back only by a restore like it (one waiting under a budget
// that asks about restores), never by a discretionary rise waiting or rejected.
func (l *ledger) propose(d placement.Decision, restores map[string]bool, now time.Time) ([]candidate, Proposal) {
	var cands []candidate
	prop := Proposal{At: now}
	index := map[string]int{}
	draining := map[string]bool{}
	for _, a := range d.Actions {
		b := l.book(a.Workload)
		if b.finished(a.ID) || l.awaitingLike(b, a, restores[a.ID]) || b.declined(a, restores[a.ID], now) {
			continue
		}
		rec, ok := l.toRecord(b, a, now, draining)
		if !ok {
			continue
		}
		rec.Restores = restores[a.ID]
		cands = append(cands, candidate{a: a, rec: rec})
		i, ok := index[a.Workload]
		if !ok {
			i = len(prop.Plans)
			index[a.Workload] = i
			team := ""
			if w, ok := l.cfg.Workload(a.Workload); ok && w != nil {
				team = w.Team
			}
			prop.Plans = append(prop.Plans, WorkloadPlan{PlanID: rec.PlanID, Workload: a.Workload, Team: team,
				CostBefore: l.cost(b)})
		}
		prop.Plans[i].Actions = append(prop.Plans[i].Actions, a)
		if restores[a.ID] {
			prop.Plans[i].Restores = append(prop.Plans[i].Restores, a.ID)
		}
	}
	for i := range prop.Plans {
		prop.Plans[i].Replaced = replaced(l.books[prop.Plans[i].Workload], prop.Plans[i].Actions)
	}
	return cands, prop
}

// awaitingLike says whether b already holds an action like a (a restore, or not) waiting for
// approval: the planner proposes it again on every pass until someone answers.
func (l *ledger) awaitingLike(b *Book, a placement.Action, restores bool) bool {
	return slices.ContainsFunc(b.Actions, func(r Record) bool {
		return r.Stage == StageAwaiting && r.Target.Kind == string(a.Kind) && r.Target.Reason == string(a.Reason) &&
			r.Target.Offer == a.Offer && (r.Restores || !restores)
	})
}

// replaced pairs each launch that takes a replica's place with the replicas it replaces: a
// reclaim's replacement (or an on-demand fallback) with the workload's reclaimed replicas; a move
// (cheaper offer, residency) with its live replicas that no drain of this pass touches, the most
// expensive first, as the planner drains them once the new ones are ready.
func replaced(b *Book, acts []placement.Action) map[string][]Rep {
	drained := map[string]bool{}
	for _, a := range acts {
		for _, id := range a.Replicas {
			drained[id] = true
		}
	}
	var lost, live []Rep
	for _, r := range b.Replicas {
		switch {
		case r.State == placement.StateReclaimed:
			lost = append(lost, r)
		case (r.State == placement.StateReady || r.State == placement.StateLaunching) && !drained[r.ID]:
			live = append(live, r)
		}
	}
	slices.SortStableFunc(live, func(x, y Rep) int {
		if x.PricePerHour != y.PricePerHour {
			if x.PricePerHour > y.PricePerHour {
				return -1
			}
			return 1
		}
		return cmp.Compare(x.ID, y.ID)
	})
	out := map[string][]Rep{}
	take := func(from *[]Rep, id string, n int) {
		n = min(n, len(*from))
		out[id] = append(out[id], (*from)[:n]...)
		*from = (*from)[n:]
	}
	for _, a := range acts {
		if a.Kind != placement.ActionLaunch {
			continue
		}
		switch a.Reason {
		case placement.ReasonReclaim, placement.ReasonFallback:
			take(&lost, a.ID, a.Count)
		case placement.ReasonCheaperOffer, placement.ReasonResidency:
			take(&live, a.ID, a.Count)
		}
	}
	return out
}

// makeHolds completes the gate's holds: ids, owners, deadlines and the plan the question shows.
// Held actions the pass does not record (unknown to it) are left out.
func (l *ledger) makeHolds(in []Hold, cands []candidate, prop Proposal, now time.Time) []Hold {
	byID := map[string]candidate{}
	for _, c := range cands {
		byID[c.a.ID] = c
	}
	var out []Hold
	for _, h := range in {
		h.Actions = slices.DeleteFunc(slices.Clone(h.Actions), func(id string) bool { _, ok := byID[id]; return !ok })
		if len(h.Actions) == 0 {
			continue
		}
		h.ID, h.AskedAt, h.Owners = holdID(h.Actions), now, map[string]string{}
		if h.Timeout > 0 {
			h.Deadline = now.Add(h.Timeout)
		}
		for _, id := range h.Actions {
			h.Owners[id] = byID[id].a.Workload
		}
		h.Plan = l.holdPlan(h, byID, prop, now)
		out = append(out, h)
	}
	return out
}

// holdPlan is the plan a hold's question shows: its actions, and the spend per hour of the
// workloads concerned before and after their plans.
func (l *ledger) holdPlan(h Hold, byID map[string]candidate, prop Proposal, now time.Time) events.PlanDecided {
	ws := h.Workloads()
	p := events.PlanDecided{Meta: events.Meta{At: now}, Workload: strings.Join(ws, ", "), PlanID: h.ID, NeedsApproval: true}
	for _, wp := range prop.Plans {
		if slices.Contains(ws, wp.Workload) {
			p.USDPerHourWas += wp.CostBefore
			p.USDPerHourNow += wp.CostBefore + wp.Net()
		}
	}
	p.USDPerHourNow = max(p.USDPerHourNow, 0)
	for _, id := range h.Actions {
		p.Actions = append(p.Actions, byID[id].planAction(true))
	}
	return p
}

// planAction is the candidate as a question shows it.
func (c candidate) planAction(needsApproval bool) events.PlanAction {
	return events.PlanAction{ID: c.a.ID, Kind: string(c.a.Kind), Location: c.rec.Target.Location, Offer: c.a.Offer,
		Market: marketOr(c.rec.Target.Market), Replicas: c.a.Count, Delta: delta(c.a), Reason: string(c.a.Reason),
		NeedsApproval: needsApproval}
}
