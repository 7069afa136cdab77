package arbiter

import (
	"encoding/hex"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/placement"
)

// ReasonGoBack is the reason of the action a question asked after a restore proposes: going back
// to the cheapest placement that keeps the workload's minimum, by draining what the restore
// launched above it. It waits in its book like a held action; Go back approves it, Keep (or no
// answer by the deadline) rejects it and the restore stays.
const ReasonGoBack = "go_back"

// askAfter completes the gate's tells once their restores are recorded: each restore applied gets a
// go-back action waiting in its book, and the go-backs of one tell form the hold that puts them
// to its approvers (Hold.Restored). It returns the holds, for the caller to store and ask as it
// does the others.
func (l *ledger) askAfter(in []Hold, cands []candidate, prop Proposal, now time.Time, dirty map[string]bool) []Hold {
	byID := map[string]candidate{}
	for _, c := range cands {
		byID[c.a.ID] = c
	}
	var out []Hold
	for _, h := range in {
		var restored []candidate
		var backs []Record
		for _, id := range h.Actions {
			c, ok := byID[id]
			if !ok {
				continue
			}
			if rec := l.book(c.a.Workload).record(id); rec != nil && rec.Stage != StageAwaiting && len(rec.Launch) > 0 {
				restored, backs = append(restored, c), append(backs, goBackOf(*rec, now))
			}
		}
		if len(backs) == 0 {
			continue
		}
		h.Actions, h.Owners, h.AskedAt, h.Restored = nil, map[string]string{}, now, true
		for i, r := range backs {
			h.Actions = append(h.Actions, r.Target.ActionID)
			h.Owners[r.Target.ActionID] = restored[i].a.Workload
		}
		h.ID = holdID(h.Actions)
		if h.Timeout > 0 {
			h.Deadline = now.Add(h.Timeout)
		}
		for i := range backs {
			w := restored[i].a.Workload
			backs[i].Hold = h.ID
			l.book(w).Actions = append(l.book(w).Actions, backs[i])
			dirty[w] = true
			l.m.actions.WithLabelValues(string(placement.ActionDrain), "awaiting_approval").Inc()
			l.ann.announce(backs[i], w, events.ActionAwaitingApproval, "restore "+restored[i].a.ID+" was applied at once; its approvers may go back on it")
		}
		h.Plan = toldPlan(h, restored, backs, prop, now)
		out = append(out, h)
	}
	return out
}

// goBackOf is the go-back of restore rec: a drain of the replicas it launched, waiting.
func goBackOf(rec Record, now time.Time) Record {
	r := Record{Target: rec.Target, PlanID: rec.PlanID, Stage: StageAwaiting, CostPerHour: -rec.CostPerHour, At: now}
	r.Target.ActionID, r.Target.Kind, r.Target.Reason = goBackID(rec.Target.ActionID), string(placement.ActionDrain), ReasonGoBack
	for _, l := range rec.Launch {
		r.Drain = append(r.Drain, l.ID)
	}
	return r
}

func goBackID(restore string) string {
	h := fnv.New128a()
	h.Write([]byte("go-back\x00" + restore))
	return hex.EncodeToString(h.Sum(nil))
}

// toldPlan is what a question after restores shows: what was restored where, the spend per hour
// of the workloads before and after the restores (what they added), and the go-backs it asks
// about.
func toldPlan(h Hold, restored []candidate, backs []Record, prop Proposal, now time.Time) events.PlanDecided {
	ws := h.Workloads()
	p := events.PlanDecided{Meta: events.Meta{At: now}, Workload: strings.Join(ws, ", "), PlanID: h.ID, NeedsApproval: true}
	for _, wp := range prop.Plans {
		if slices.Contains(ws, wp.Workload) {
			p.USDPerHourWas += wp.CostBefore
		}
	}
	p.USDPerHourNow = p.USDPerHourWas
	for i, c := range restored {
		p.USDPerHourNow += c.a.CostPerHour
		for _, wp := range prop.Plans {
			for _, r := range wp.Replaced[c.a.ID] {
				p.USDPerHourNow -= r.PricePerHour
			}
		}
		back := backs[i]
		p.Actions = append(p.Actions, c.planAction(false), events.PlanAction{ID: back.Target.ActionID, Kind: back.Target.Kind,
			Location: back.Target.Location, Offer: back.Target.Offer, Market: marketOr(back.Target.Market),
			Replicas: max(back.Target.Replicas-len(back.Drain), 0), Delta: -len(back.Drain), Reason: ReasonGoBack, NeedsApproval: true})
	}
	return p
}

// goBack carries out Go back on a restore: of the replicas it launched, those still there go,
// launching ones first and then the most expensive, as far as the workload keeps its minimum (the
// cheapest placement that keeps it); within the minimum the planner's own moves return it to
// cheaper capacity where that pays. The workload's loss is forgotten, so what it launches next is
// asked about like any rise.
func (l *ledger) goBack(b *Book, id, who string) []step {
	drain := b.record(id).Drain
	floor := 0
	if w, ok := l.cfg.Workload(b.Workload); ok {
		floor = w.Replicas.Min
	}
	var victims []Rep
	for _, r := range cutVictims(b, 0) {
		if slices.Contains(drain, r.ID) {
			victims = append(victims, r)
		}
	}
	victims = victims[:min(len(victims), max(b.live()-floor, 0))]
	b.Lost = Loss{}
	return l.drainAway(b, id, who, victims, "go back", "nothing the restore launched is left above the workload's minimum: it keeps what it has")
}
