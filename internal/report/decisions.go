package report

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/events"
)

// maxPlans bounds the plans decisions and holds return, newest first: a page shows a timeline,
// and each plan's cause is looked up, so a month of a busy fleet is cut with a note saying so.
const maxPlans = 1000

// StatusLaunchFailed is the last status of a launch the arbiter gave up (no capacity, or not
// ready in time): the give-up is an action of its own (reason launch_failed), told here as what
// became of the launch.
const StatusLaunchFailed = events.ReasonLaunchFailed

// plan is one plan.decided with its actions and what became of them.
type plan struct {
	Workload      string                  `json:"workload"`
	PlanID        string                  `json:"plan_id"`
	AtMS          int64                   `json:"at_ms"`
	Before        float64                 `json:"before"`
	After         float64                 `json:"after"`
	NeedsApproval bool                    `json:"needs_approval"`
	Actions       []planAction            `json:"plan_actions"`
	steps         map[string][]actionStep // by action id, in time order
}

type planAction struct {
	ID            string `json:"id"`
	Kind          string `json:"kind"`
	Location      string `json:"location"`
	Offer         string `json:"offer"`
	Market        string `json:"market"`
	Replicas      int64  `json:"replicas"`
	Delta         int64  `json:"delta"`
	Reason        string `json:"reason"`
	NeedsApproval bool   `json:"needs_approval"`
}

// actionStep is one action.updated of a plan's action.
type actionStep struct {
	PlanID   string `json:"plan_id"`
	ActionID string `json:"action_id"`
	Status   string `json:"status"`
	Actor    string `json:"actor"`
	Detail   string `json:"detail"`
	AtMS     int64  `json:"at_ms"`
}

// stepOrder breaks ties between steps of one instant: a hold approved and applied at once was
// approved first.
var stepOrder = []string{string(events.ActionProposed), string(events.ActionAwaitingApproval), string(events.ActionApproved),
	string(events.ActionRejected), string(events.ActionExpired), string(events.ActionApplied), string(events.ActionFailed), StatusLaunchFailed}

// last is the action's latest step, or false when none was recorded.
func (p *plan) last(action string) (actionStep, bool) {
	s := p.steps[action]
	if len(s) == 0 {
		return actionStep{}, false
	}
	return s[len(s)-1], true
}

// loadPlans reads the plans decided in the window (newest first, at most maxPlans, and whether
// there were more) with every step of their actions, the launches given up included; only those
// that needed approval when held.
func loadPlans(ctx context.Context, q Querier, o Options, planID string, held bool) ([]*plan, bool, error) {
	conds := []string{where(o.Filter, map[Dim]string{Workload: "workload"})}
	if held {
		conds = append(conds, "needs_approval")
	}
	if planID != "" {
		conds = append(conds, "plan_id = "+lit(planID))
	}
	for d, col := range map[Dim]string{Location: "location", Market: "market"} {
		if vals := o.Filter[d]; len(vals) > 0 {
			conds = append(conds, fmt.Sprintf("arrayExists(a -> a.%s IN (%s), actions)", col, lits(vals)))
		}
	}
	// The newest rows first, a redelivered plan (the same event, so the same time) once: the
	// engine keeps the top rows as it reads rather than grouping every plan of the window.
	ps, err := queryRows[*plan](ctx, q, fmt.Sprintf(`SELECT workload, plan_id, toUnixTimestamp64Milli(at) AS at_ms,
		usd_per_hour_before AS before, usd_per_hour_after AS after, needs_approval, actions AS plan_actions
		FROM %s WHERE at >= %s AND at < %s AND %s
		ORDER BY at DESC, workload, plan_id LIMIT 1 BY workload, plan_id LIMIT %d`,
		q.Table("plan_decided"), ms64(o.Window.Since), ms64(o.Window.Until), strings.Join(conds, " AND "), maxPlans+1))
	if err != nil {
		return nil, false, fmt.Errorf("reading plans: %w", err)
	}
	ps = slices.DeleteFunc(ps, func(p *plan) bool { return !o.keepPlan(p) })
	more := len(ps) > maxPlans
	if more {
		ps = ps[:maxPlans]
	}
	if len(ps) == 0 {
		return nil, more, nil
	}
	return ps, more, loadSteps(ctx, q, o, ps)
}

// keepPlan applies the filters the query cannot: provider, region and team come from the fleet
// file.
func (o Options) keepPlan(p *plan) bool {
	if !o.Filter.keep(Team, o.team(p.Workload)) {
		return false
	}
	return slices.ContainsFunc(p.Actions, func(a planAction) bool {
		return o.Filter.keep(Provider, o.provider(a.Location)) && o.Filter.keep(Region, o.region(a.Location))
	}) || len(p.Actions) == 0 && len(o.Filter[Provider]) == 0 && len(o.Filter[Region]) == 0
}

// loadSteps reads every step of the plans' actions (a redelivered step counts once), and the
// launches given up after them.
func loadSteps(ctx context.Context, q Querier, o Options, ps []*plan) error {
	ids, workloads := make([]string, len(ps)), map[string]bool{}
	for i, p := range ps {
		ids[i], workloads[p.Workload] = p.PlanID, true
		p.steps = map[string][]actionStep{}
	}
	ws := sortedKeys(workloads)
	since := ms64(o.Window.Since)
	steps, err := queryRows[actionStep](ctx, q, fmt.Sprintf(`SELECT plan_id, action_id, status, actor, detail,
		toUnixTimestamp64Milli(at) AS at_ms FROM %s
		WHERE workload IN (%s) AND at >= %s AND plan_id IN (%s)
		ORDER BY at_ms LIMIT 1 BY plan_id, action_id, status`,
		q.Table("action_updated"), lits(ws), since, lits(ids)))
	if err != nil {
		return fmt.Errorf("reading the plans' actions: %w", err)
	}
	byID := map[string]*plan{}
	for _, p := range ps {
		byID[p.PlanID] = p
	}
	for _, s := range steps {
		if p := byID[s.PlanID]; p != nil {
			p.steps[s.ActionID] = append(p.steps[s.ActionID], s)
		}
	}
	for _, p := range ps {
		for _, s := range p.steps {
			slices.SortStableFunc(s, func(a, b actionStep) int {
				return cmp.Or(cmp.Compare(a.AtMS, b.AtMS), cmp.Compare(slices.Index(stepOrder, a.Status), slices.Index(stepOrder, b.Status)))
			})
		}
	}
	return attachGiveUps(ctx, q, ws, since, ps)
}

// launchGiveUp is a launch the arbiter gave up.
type launchGiveUp struct {
	Workload string `json:"workload"`
	Location string `json:"location"`
	Offer    string `json:"offer"`
	Actor    string `json:"actor"`
	Detail   string `json:"detail"`
	AtMS     int64  `json:"at_ms"`
}

// attachGiveUps makes each give-up the last step of the launch it ends: the newest plan before
// it that launched on that offer. The give-up is an action of its own, under a plan id of its
// own, so only where and when tie it to the launch.
func attachGiveUps(ctx context.Context, q Querier, ws []string, since string, ps []*plan) error {
	gs, err := queryRows[launchGiveUp](ctx, q, fmt.Sprintf(`SELECT workload, any(location) AS location, any(offer) AS offer,
		any(actor) AS actor, any(detail) AS detail, toUnixTimestamp64Milli(min(at)) AS at_ms FROM %s
		WHERE workload IN (%s) AND at >= %s AND kind = 'retire' AND reason = %s GROUP BY workload, action_id`,
		q.Table("action_updated"), lits(ws), since, lit(events.ReasonLaunchFailed)))
	if err != nil {
		return fmt.Errorf("reading launches given up: %w", err)
	}
	for _, g := range gs {
		for _, p := range ps { // newest first
			if p.Workload != g.Workload || p.AtMS > g.AtMS {
				continue
			}
			i := slices.IndexFunc(p.Actions, func(a planAction) bool {
				return a.Kind == "launch" && a.Location == g.Location && a.Offer == g.Offer
			})
			if i < 0 {
				continue
			}
			id := p.Actions[i].ID
			p.steps[id] = append(p.steps[id], actionStep{PlanID: p.PlanID, ActionID: id, Status: StatusLaunchFailed,
				Actor: g.Actor, Detail: g.Detail, AtMS: g.AtMS})
			break
		}
	}
	return nil
}

// reasons are the plan's actions' reasons, each once, in the actions' order.
func (p *plan) reasons() []string {
	var out []string
	for _, a := range p.Actions {
		if a.Reason != "" && !slices.Contains(out, a.Reason) {
			out = append(out, a.Reason)
		}
	}
	return out
}

// outcome sums up the actions' last statuses: "applied" when all were, else counts in the
// lifecycle's order ("1 applied, 1 launch_failed"). An action with no step recorded is
// "unrecorded".
func (p *plan) outcome() string {
	n := map[string]int{}
	for _, a := range p.Actions {
		s, _ := p.last(a.ID)
		n[cmp.Or(s.Status, "unrecorded")]++
	}
	if len(n) == 1 {
		return sortedKeys(n)[0]
	}
	var parts []string
	for _, s := range append(slices.Clone(stepOrder), "unrecorded") {
		if n[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[s], s))
		}
	}
	return strings.Join(parts, ", ")
}

// ActionDetail is one action of a plan as the decisions report shows it (the actions_detail
// column).
type ActionDetail struct {
	Kind     string `json:"kind" yaml:"kind"`
	Location string `json:"location" yaml:"location"`
	Offer    string `json:"offer" yaml:"offer"`
	Market   string `json:"market" yaml:"market"`
	Delta    int64  `json:"delta" yaml:"delta"`
	Reason   string `json:"reason" yaml:"reason"`
	Status   string `json:"status" yaml:"status"`
	Actor    string `json:"actor" yaml:"actor"`
	Detail   string `json:"detail" yaml:"detail"`
}

// ActionDetails is the actions_detail column: JSON prints it as a list, tables as one line.
type ActionDetails []ActionDetail

func (ds ActionDetails) String() string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%s %s %+d %s", d.Kind, d.Location, d.Delta, d.Status)
	}
	return strings.Join(parts, "; ")
}

func (p *plan) details() ActionDetails {
	out := make(ActionDetails, len(p.Actions))
	for i, a := range p.Actions {
		s, _ := p.last(a.ID)
		out[i] = ActionDetail{Kind: a.Kind, Location: a.Location, Offer: a.Offer, Market: a.Market, Delta: a.Delta,
			Reason: a.Reason, Status: s.Status, Actor: s.Actor, Detail: s.Detail}
	}
	return out
}

// Decisions is the arbiter's plans in the window, newest first, each with its reasons, the cost
// before and after, what became of its actions, and the event that caused it.
func Decisions(ctx context.Context, q Querier, o Options, planID string) (*Result, error) {
	ps, more, err := loadPlans(ctx, q, o, planID, false)
	if err != nil {
		return nil, err
	}
	causes, err := findCauses(ctx, q, o, ps)
	if err != nil {
		return nil, err
	}
	res := &Result{Title: "Decisions, " + o.Window.String(), Columns: []string{"at", "plan_id", "workload", "reasons",
		"usd_per_hour_before", "usd_per_hour_after", "usd_per_hour_change", "needs_approval", "actions", "outcome",
		"cause_kind", "cause_id", "cause_at", "cause_detail", "actions_detail"}}
	for i, p := range ps {
		c := causes[i]
		res.Rows = append(res.Rows, cli.Row{"at": msTime(p.AtMS), "plan_id": p.PlanID, "workload": p.Workload,
			"reasons": strings.Join(p.reasons(), ","), "usd_per_hour_before": round(p.Before, 4),
			"usd_per_hour_after": round(p.After, 4), "usd_per_hour_change": round(p.After-p.Before, 4),
			"needs_approval": p.NeedsApproval, "actions": len(p.Actions), "outcome": p.outcome(),
			"cause_kind": c.Kind, "cause_id": c.ID, "cause_at": msTime(c.AtMS), "cause_detail": c.Detail,
			"actions_detail": p.details()})
	}
	if more {
		res.Notes = append(res.Notes, moreNote)
	}
	return res, nil
}

var moreNote = fmt.Sprintf("the newest %d plans only: narrow the window or filter by workload", maxPlans)

// msTime is a time in milliseconds as RFC 3339, or "" for none.
func msTime(ms int64) string {
	if ms == 0 {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano)
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
