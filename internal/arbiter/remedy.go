package arbiter

import (
	"context"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/placement"
)

// RemedyRequest is a cost anomaly that a budget policy wants remedied on one workload: the
// anomaly watcher (internal/anomalywatch) sends one when an anomaly in the policy's scope is
// explained by on-demand spend (market=on_demand moved) and the policy lists the remedy.
type RemedyRequest struct {
	Anomaly  string        // the cost.anomaly id: one question per anomaly and workload, ever
	Workload string        // the workload whose on-demand replicas would move
	Policy   budget.Policy // whose approvers are asked, with its timeout
	Remedy   budget.Remedy
	Expected float64 // the anomaly's expected and observed $/h, for the question
	Observed float64
}

// maxRemedied bounds the anomalies a book remembers having asked about.
const maxRemedied = 32

// Remedy proposes request r's remedy as a held plan, asked through the same approvals as a hold
// of the budget gate (the policy's approvers, its timeout; Slack and the console answer it), and
// returns the hold's id, or "" when there is nothing to propose: not leading, no on-demand
// replica, no spot offer priced and cheaper, a remedy already open for the workload, or this
// anomaly asked about already. Approved, the executor applies it as any approved action; rejected
// or timed out, nothing moves. It never touches a reclaim's path: it only adds a waiting action.
func (s *Service) Remedy(ctx context.Context, r RemedyRequest) (string, error) {
	if r.Remedy != budget.RemedyFallback {
		return "", fmt.Errorf("remedy %q: only %s is known", r.Remedy, budget.RemedyFallback)
	}
	may := false
	s.bk.with(func(l *ledger) { may = l.mayRemedy(r) })
	if !may { // asked already: the watcher calls on every update of an open anomaly
		return "", nil
	}
	now := s.o.Clock.Now()
	offs := s.mk.offers.all()
	s.mk.withHistory(offs, now) // outside the books' lock, as a pass reads them
	var h *Hold
	s.bk.with(func(l *ledger) { h = l.remedy(r, offs, now) })
	if h == nil {
		return "", nil
	}
	// Written before it is asked, so a new leader finds what was asked; here, not in the background
	// (askWhenSaved), since the caller's ctx ends when Remedy returns. Ask only queues.
	if err := s.bk.flush(ctx, r.Workload); err != nil {
		return "", fmt.Errorf("writing the remedy of %s to its book: %w", r.Anomaly, err)
	}
	ask(ctx, s.o.Gate, []Hold{*h})
	return h.ID, nil
}

// remedy records the fallback remedy of r in its workload's book, waiting for approval, and
// returns its hold; nil when there is nothing to ask.
func (l *ledger) remedy(r RemedyRequest, offers []placement.Offer, now time.Time) *Hold {
	if !l.mayRemedy(r) {
		return nil
	}
	b, w := l.books[r.Workload], l.workload(r.Workload)
	onDemand := onDemandReplicas(b)
	spot, ok := spotOffer(l.cfg, w, offers, len(onDemand), now)
	if !ok {
		return nil
	}
	was := 0.0
	for _, rep := range onDemand {
		was += rep.PricePerHour
	}
	saved := was - float64(len(onDemand))*spot.PricePerHour
	if saved <= 0 {
		return nil
	}
	a := placement.Action{ID: remedyID(r.Anomaly, r.Workload), Workload: r.Workload, Kind: placement.ActionLaunch,
		Reason: placement.ReasonCheaperOffer, Offer: spot.ID, Count: len(onDemand), CostPerHour: float64(len(onDemand)) * spot.PricePerHour}
	rec, ok := l.toRecord(b, a, now, map[string]bool{})
	if !ok {
		return nil
	}
	h := l.remedyHold(r, candidate{a: a, rec: rec}, l.cost(b), saved, now)
	rec.Stage, rec.Hold = StageAwaiting, h.ID
	b.Actions = append(b.Actions, rec)
	b.Holds = append(b.Holds, h)
	b.Remedied = append(b.Remedied, r.Anomaly)
	if len(b.Remedied) > maxRemedied {
		b.Remedied = slices.Clone(b.Remedied[len(b.Remedied)-maxRemedied:])
	}
	l.touch(b)
	l.m.actions.WithLabelValues(string(a.Kind), "awaiting_approval").Inc()
	l.ann.announce(rec, r.Workload, events.ActionAwaitingApproval, "remedy of cost anomaly "+r.Anomaly)
	return &h
}

// mayRemedy says whether r may ask: this arbiter leads, the workload is known and has a book, it
// has no remedy open, and r's anomaly has not asked before.
func (l *ledger) mayRemedy(r RemedyRequest) bool {
	b := l.books[r.Workload]
	return l.leading && b != nil && l.workload(r.Workload) != nil && !slices.Contains(b.Remedied, r.Anomaly) &&
		!slices.ContainsFunc(b.Holds, func(h Hold) bool { return h.Remedy != "" })
}

// remedyHold is the question a remedy asks: the anomaly, the $/h saved and the risk.
func (l *ledger) remedyHold(r RemedyRequest, c candidate, before, saved float64, now time.Time) Hold {
	id := holdID([]string{c.a.ID})
	reason := fmt.Sprintf("cost anomaly %s (expected %.2f/h, observed %.2f/h) is on-demand spend; spot is priced again: "+
		"moving %d replica(s) of %s back to spot at %s saves %.2f/h. Risk: spot can be reclaimed, and the workload falls back "+
		"to on-demand again if it is", r.Anomaly, r.Expected, r.Observed, c.a.Count, r.Workload, c.a.Offer, saved)
	h := Hold{ID: id, Actions: []string{c.a.ID}, Owners: map[string]string{c.a.ID: r.Workload}, Reasons: []string{reason},
		Policies: []string{r.Policy.Name}, Approvers: r.Policy.Approvers, Timeout: r.Policy.Timeout(), AskedAt: now,
		Deadline: now.Add(r.Policy.Timeout()), Remedy: r.Anomaly}
	h.Plan = events.PlanDecided{Meta: events.Meta{At: now}, Workload: r.Workload, PlanID: id, NeedsApproval: true,
		USDPerHourWas: before, USDPerHourNow: max(before-saved, 0), Actions: []events.PlanAction{c.planAction(true)}}
	return h
}

// workload is the fleet file's workload named name, or nil.
func (l *ledger) workload(name string) *fleet.Workload {
	w, ok := l.cfg.Workload(name)
	if !ok {
		return nil
	}
	return w
}

// onDemandReplicas are b's ready replicas on on-demand capacity: what a stuck fallback left.
func onDemandReplicas(b *Book) []Rep {
	var out []Rep
	for _, r := range b.Replicas {
		if r.Market == events.OnDemand && r.State == placement.StateReady {
			out = append(out, r)
		}
	}
	return out
}

// spotOffer is the cheapest spot offer that fits w and is available for n replicas: no capacity
// hint below n, and no launch there that found no capacity or was reclaimed within spotQuiet.
func spotOffer(cfg *fleet.Config, w *fleet.Workload, offers []placement.Offer, n int, now time.Time) (placement.Offer, bool) {
	var best placement.Offer
	found := false
	for _, o := range offers {
		if o.Market != placement.MarketSpot || n == 0 || !fits(cfg, w, o) || (o.Capacity > 0 && o.Capacity < n) || troubled(o, now) {
			continue
		}
		if !found || o.PricePerHour < best.PricePerHour {
			best, found = o, true
		}
	}
	return best, found
}

// spotQuiet is how long a spot offer must have gone without a failed launch or a reclaim before a
// remedy proposes it.
const spotQuiet = time.Hour

func troubled(o placement.Offer, now time.Time) bool {
	return slices.ContainsFunc(o.History, func(ob placement.Observation) bool {
		return (ob.Kind == placement.ObsLaunchFailed || ob.Kind == placement.ObsPreempted) && now.Sub(ob.At) < spotQuiet
	})
}

// fits says whether offer o can run a replica of w, by the planner's rules (placement's
// eligible): the workload takes spot, a GPU model it accepts (or enough memory when it names
// none), enough GPUs per instance, a location its residency allows.
func fits(cfg *fleet.Config, w *fleet.Workload, o placement.Offer) bool {
	switch {
	case len(w.Markets) > 0 && !slices.Contains(w.Markets, events.Spot),
		len(w.GPU.Models) > 0 && !slices.Contains(w.GPU.Models, o.GPUModel),
		len(w.GPU.Models) == 0 && o.GPUMemoryGB < w.GPU.MinMemoryGB,
		o.GPUCount < max(w.GPU.Count, 1):
		return false
	}
	if len(w.Residency) == 0 {
		return true
	}
	l, ok := cfg.Location(o.Location)
	return ok && slices.ContainsFunc(w.Residency, func(t string) bool { return slices.Contains(l.Residency, t) })
}

// remedyID names the remedy's action by anomaly and workload, so a restart proposes the same one.
func remedyID(anomaly, workload string) string {
	h := fnv.New128a()
	h.Write([]byte("remedy\x00" + anomaly + "\x00" + workload))
	return hex.EncodeToString(h.Sum(nil))
}
