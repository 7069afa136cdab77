package budget

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/placement"
)

// Change is one action of a plan as a budget sees it: where its spend lands and how much.
type Change struct {
	ActionID string
	Kind     placement.ActionKind
	Reason   placement.Reason
	Provider string // empty for a scale action, which spans the workload's locations
	Location string
	// USDPerHour is the change in spend per hour once the action is applied (negative for cuts).
	// A launch that replaces a replica (a move, a reclaim's replacement) comes with a second
	// change of the same ActionID and kind drain: the replaced replica's saving, where it runs.
	USDPerHour float64
	// BelowMinimum marks a cut the planner would make below the workload's minimum: it is never
	// applied without an approval.
	BelowMinimum bool
	// Restores marks a launch that replaces capacity the workload had before a loss (a reclaim,
	// a failed launch, an instance gone), up to what it had: a policy that restores first does not
	// hold it for approve_over, and tells its approvers after.
	Restores bool
}

// Plan is the part of a placement decision that concerns one workload.
type Plan struct {
	ID       string
	Workload string
	Team     string
	Changes  []Change
}

// Rise is the net change in spend per hour of the plan's changes inside scope.
func (p Plan) Rise(sc Scope) float64 { return p.riseOf(sc, anyChange) }

// riseOf is the net change in spend per hour of the plan's changes inside scope that count.
func (p Plan) riseOf(sc Scope, counts func(Change) bool) float64 {
	r := 0.0
	for _, c := range p.Changes {
		if p.inScope(sc, c) && counts(c) {
			r += c.USDPerHour
		}
	}
	return r
}

func anyChange(Change) bool { return true }

// inScope reports whether a change falls in sc. A scale action has no location: it falls in any
// scope that its workload and team fall in.
func (p Plan) inScope(sc Scope, c Change) bool {
	if c.Location == "" {
		return sc.Matches(p.Workload, p.Team, sc.Provider, sc.Location)
	}
	return sc.Matches(p.Workload, p.Team, c.Provider, c.Location)
}

// Outcome is a budget's answer on a plan.
type Outcome string

// The outcomes of a review.
const (
	Allow         Outcome = "allow"          // apply it
	NeedsApproval Outcome = "needs_approval" // ask Approvers; no answer by Timeout means rejected
	Blocked       Outcome = "blocked"        // drop the actions in Verdict.Blocked, apply the rest
)

// Verdict is the budgets' answer on one plan.
type Verdict struct {
	Outcome   Outcome
	Reasons   []string // one line per policy that held the plan back
	Policies  []string
	Blocked   []string // ids of actions that may not be applied
	Approve   []string // ids of actions that wait for an approval
	Approvers []string // Slack user or group ids that may approve; union over the policies
	Timeout   time.Duration
	// Holds group the actions in Approve: each hold is asked once and decided as a whole.
	Holds []Hold
	// Told are restores of lost capacity let through that a policy would have held: each is
	// applied at once and put to its approvers after, to keep or to go back on.
	Told []Hold
}

// replacement reasons add no capacity: they replace what was lost, moved or disqualified, so
// block-scale-up lets them through.
var replacement = []placement.Reason{placement.ReasonReclaim, placement.ReasonCheaperOffer,
	placement.ReasonResidency, placement.ReasonFallback}

// Status is a policy's position as of the last evaluation.
type Status struct {
	Policy  Policy
	Spend   Spend
	Reached []Threshold
}

// Active reports whether a reached threshold takes action a.
func (s Status) Active(a Action) bool {
	return slices.ContainsFunc(s.Reached, func(t Threshold) bool { return t.Action == a })
}

// Gate is what the arbiter asks about budgets: it holds the policies (kept current from
// Store.Watch), evaluates spend on each tick, reviews plans and gives the planner its caps.
// Safe for concurrent use; it does no I/O and reads no clock.
type Gate struct {
	mu       sync.Mutex
	policies []Policy
	gen      uint64 // counts SetPolicies, so Evaluate knows its measures are of the policies in force
	tracker  Tracker
	status   map[string]Status
}

// NewGate returns a gate with no policies.
func NewGate() *Gate { return &Gate{status: map[string]Status{}} }

// SetPolicies replaces the policies; what was tracked for a removed policy is dropped.
func (g *Gate) SetPolicies(ps []Policy) {
	g.mu.Lock()
	defer g.mu.Unlock()
	keep := map[string]bool{}
	for _, p := range ps {
		keep[p.Name] = true
	}
	for _, p := range g.policies {
		if !keep[p.Name] {
			g.tracker.Forget(p.Name)
			delete(g.status, p.Name)
		}
	}
	g.policies = slices.Clone(ps)
	g.gen++
}

// Policies returns the policies in force.
func (g *Gate) Policies() []Policy {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.policies)
}

// Restore seeds the alert tracker with alerts already published this period.
func (g *Gate) Restore(alerts []*events.BudgetAlert) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.tracker.Restore(alerts)
}

// Evaluate measures every policy's spend at now from the replica intervals and returns the
// budget.alert events to publish. The spends are measured outside the lock: a forecast backtests
// weeks of hours, and Review, on a reclaim's path, must not wait for it. One caller at a time
// (the arbiter's full pass) steps the alert tracker.
func (g *Gate) Evaluate(now time.Time, ivs []Interval) []*events.BudgetAlert {
	for {
		g.mu.Lock()
		policies, gen := g.policies, g.gen // SetPolicies replaces the slice, never changes it
		g.mu.Unlock()
		spends := make([]Spend, len(policies))
		for i, p := range policies {
			spends[i] = Measure(p, ivs, now)
		}
		g.mu.Lock()
		if g.gen != gen { // the policies changed meanwhile: measure the new ones
			g.mu.Unlock()
			continue
		}
		var out []*events.BudgetAlert
		for i, p := range policies {
			g.status[p.Name] = Status{Policy: p, Spend: spends[i], Reached: Reached(p, spends[i])}
			out = append(out, g.tracker.Step(p, spends[i], now)...)
		}
		g.mu.Unlock()
		return out
	}
}

// Statuses returns every policy's position as of the last evaluation, by name.
func (g *Gate) Statuses() []Status {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]Status, 0, len(g.status))
	for _, p := range g.policies {
		if s, ok := g.status[p.Name]; ok {
			out = append(out, s)
		}
	}
	return out
}

// current is the status of p if the last evaluation is in the period holding now.
func (g *Gate) current(p Policy, now time.Time) (Status, bool) {
	s, ok := g.status[p.Name]
	if !ok || now.Before(s.Spend.PeriodStart) || !now.Before(s.Spend.PeriodEnd) {
		return Status{}, false
	}
	return s, true
}

// Caps returns the spend caps the planner must respect at now: a scope whose block-scale-up
// threshold is reached may not spend more per hour than it burns now; one whose scale-to-floor
// threshold is reached is capped at zero, so the planner cuts it to the workloads' minimums and
// asks for approval (never acts) below them. Statuses from an earlier period give no caps.
func (g *Gate) Caps(now time.Time) []placement.Budget {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []placement.Budget
	for _, p := range g.policies {
		s, ok := g.current(p, now)
		if !ok {
			continue
		}
		switch {
		case s.Active(ScaleToFloor):
			out = append(out, placement.Budget{Name: p.Name, Scope: p.Scope.Placement(), MaxPerHour: 0})
		case s.Active(BlockScaleUp):
			out = append(out, placement.Budget{Name: p.Name, Scope: p.Scope.Placement(), MaxPerHour: s.Spend.BurnPerHour})
		}
	}
	return out
}

// Review decides whether the plans of one planning pass may be applied as they are. A policy
// judges the net change in spend per hour inside its scope, summed over every plan it covers: a
// move's launch counts with the saving of the replica it replaces, and a team's workloads count
// together. Cuts below a workload's minimum always wait for an approval; plans rising more than a
// policy's approve_over while approval is required wait too, except for restores of lost capacity
// under a policy that restores first: those are applied and told of after (Verdict.Told). Actions
// that add capacity while block-scale-up holds are blocked, restores or not. Actions that wait for
// the same approval form one Hold, applied or dropped together. The context is unused: it keeps
// the signature of a gate that would ask elsewhere.
func (g *Gate) Review(_ context.Context, plans []Plan, now time.Time) Verdict {
	g.mu.Lock()
	defer g.mu.Unlock()
	var v verdictBuilder
	covered := map[string]bool{}
	for _, p := range g.policies {
		if !slices.ContainsFunc(plans, func(pl Plan) bool { return pl.touches(p.Scope) }) {
			continue
		}
		s, _ := g.current(p, now)
		for _, pl := range plans {
			for _, c := range pl.Changes {
				if c.BelowMinimum && pl.inScope(p.Scope, c) {
					covered[c.ActionID] = true
					v.approve(p, []string{c.ActionID}, fmt.Sprintf("budget %q: cutting %s below its minimum needs an approval", p.Name, pl.Workload))
				}
			}
		}
		if s.Active(BlockScaleUp) || s.Active(ScaleToFloor) {
			for _, pl := range plans {
				for _, c := range pl.Changes {
					if grows(c) && pl.inScope(p.Scope, c) {
						v.block(p, c.ActionID, fmt.Sprintf("budget %q: scale-up blocked at %s of %.0f %s this %s",
							p.Name, reachedOf(s, BlockScaleUp, ScaleToFloor), p.Limit, p.Currency, p.Period))
					}
				}
			}
		}
		if approvalRequired(p, s) {
			reviewRise(&v, p, plans)
		}
	}
	for _, pl := range plans {
		for _, c := range pl.Changes {
			if c.BelowMinimum && !covered[c.ActionID] {
				v.approve(Policy{}, []string{c.ActionID}, fmt.Sprintf("cutting %s below its minimum needs an approval, and no budget policy names approvers", pl.Workload))
			}
		}
	}
	return v.verdict()
}

// reviewRise applies p's approve_over to the plans: the rise it weighs waits for an approval when
// over the line; restores it lets through (restore first) are told of when the whole rise,
// restores included, is over the line, as it would have been asked about.
func reviewRise(v *verdictBuilder, p Policy, plans []Plan) {
	weighed := func(c Change) bool { return !c.Restores || !p.RestoresFirst() }
	over := func(r float64) bool { return r > float64(p.ApproveOver) && r > 0 }
	if rise := riseOf(plans, p.Scope, weighed); over(rise) {
		v.approve(p, rising(plans, p.Scope, weighed), fmt.Sprintf("budget %q: the plan adds %.2f %s/h net, over the %s allowed without approval",
			p.Name, rise, p.Currency, p.ApproveOver))
	}
	restored := func(c Change) bool { return !weighed(c) }
	if added := riseOf(plans, p.Scope, restored); added > 0 && over(riseOf(plans, p.Scope, anyChange)) {
		v.tell(p, rising(plans, p.Scope, restored), fmt.Sprintf("budget %q: restoring lost capacity added %.2f %s/h, applied at once "+
			"(over the %s allowed without approval; the policy restores first and asks after)", p.Name, added, p.Currency, p.ApproveOver))
	}
}

// touches reports whether any change of the plan falls in sc.
func (p Plan) touches(sc Scope) bool {
	return slices.ContainsFunc(p.Changes, func(c Change) bool { return p.inScope(sc, c) })
}

// riseOf is the net change in spend per hour of every plan's changes inside scope that count.
func riseOf(plans []Plan, sc Scope, counts func(Change) bool) float64 {
	r := 0.0
	for _, pl := range plans {
		r += pl.riseOf(sc, counts)
	}
	return r
}

// rising lists the actions an approval of a rise in sc covers: those in scope that count and add
// spend, and in each of their plans the drains that finish a move (the break half of
// make-before-break), so a move is approved or dropped whole.
func rising(plans []Plan, sc Scope, counts func(Change) bool) []string {
	var ids []string
	for _, pl := range plans {
		moves := false
		for _, c := range pl.Changes {
			if c.USDPerHour > 0 && pl.inScope(sc, c) && counts(c) {
				ids = addOnce(ids, c.ActionID)
				moves = moves || c.Kind == placement.ActionLaunch && isMove(c.Reason)
			}
		}
		for _, c := range pl.Changes {
			if moves && c.Kind == placement.ActionDrain && isMove(c.Reason) {
				ids = addOnce(ids, c.ActionID)
			}
		}
	}
	return ids
}

// isMove: the reasons a launch replaces a live replica that is then drained.
func isMove(r placement.Reason) bool {
	return r == placement.ReasonCheaperOffer || r == placement.ReasonResidency
}

// approvalRequired: a reached require-approval threshold, or approve_over on a policy that has
// no require-approval threshold (then the rule always holds).
func approvalRequired(p Policy, s Status) bool {
	if p.Has(RequireApproval) {
		return s.Active(RequireApproval)
	}
	return p.ApproveOver > 0
}

func grows(c Change) bool {
	return c.Kind == placement.ActionLaunch && c.USDPerHour > 0 && !slices.Contains(replacement, c.Reason)
}

func reachedOf(s Status, as ...Action) string {
	for _, t := range s.Reached {
		if slices.Contains(as, t.Action) {
			return t.On.String() + " " + t.At.String()
		}
	}
	return "its limit"
}

func (b Basis) String() string { return string(b) }
