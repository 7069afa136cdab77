package report

import (
	"context"
	"strings"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/events"
)

// The statuses of a hold.
const (
	HoldPending  = "pending"
	HoldApproved = "approved"
	HoldRejected = "rejected"
	HoldTimedOut = "timed_out"
)

// holdsNote says what the events do not record.
const holdsNote = "approvers and deadlines are not recorded in the events (they are the budget policies'): " +
	"approvers is empty, and a hold is pending until its decision or its timeout (actor \"timeout\") is recorded"

// decision is how a hold was decided: its status, by whom and when (none while pending), and
// when it was put on hold.
type decision struct {
	Status, Actor, Detail string
	AtMS, HeldMS          int64
}

// decision reads the plan's hold from its actions' steps: the first approval, rejection or
// expiry of any of them decides it (a hold is decided as one), a rejection by "timeout" being a
// time-out.
func (p *plan) decision() decision {
	d := decision{Status: HoldPending}
	for _, steps := range p.steps {
		for _, s := range steps {
			switch events.ActionStatus(s.Status) {
			case events.ActionAwaitingApproval:
				if d.HeldMS == 0 || s.AtMS < d.HeldMS {
					d.HeldMS, d.Detail = s.AtMS, s.Detail
				}
			case events.ActionApproved, events.ActionRejected, events.ActionExpired:
				if d.AtMS != 0 && d.AtMS <= s.AtMS {
					continue
				}
				d.Status, d.Actor, d.AtMS = s.Status, s.Actor, s.AtMS
				if s.Actor == "timeout" || s.Status == string(events.ActionExpired) {
					d.Status = HoldTimedOut
				}
			}
		}
	}
	return d
}

// Holds is the plans that needed approval in the window, newest first, with their status now
// (pending, approved, rejected or timed out), who decided and when, and the cost they preview.
func Holds(ctx context.Context, q Querier, o Options, planID string) (*Result, error) {
	ps, more, err := loadPlans(ctx, q, o, planID, true)
	if err != nil {
		return nil, err
	}
	res := &Result{Title: "Holds, " + o.Window.String(), Columns: []string{"at", "plan_id", "workload", "reasons", "status",
		"actor", "decided_at", "held_at", "usd_per_hour_before", "usd_per_hour_after", "usd_per_hour_change", "actions",
		"approvers", "detail"}, Notes: []string{holdsNote}}
	for _, p := range ps {
		d := p.decision()
		res.Rows = append(res.Rows, cli.Row{"at": msTime(p.AtMS), "plan_id": p.PlanID, "workload": p.Workload,
			"reasons": strings.Join(p.reasons(), ","), "status": d.Status, "actor": d.Actor, "decided_at": msTime(d.AtMS),
			"held_at": msTime(d.HeldMS), "usd_per_hour_before": round(p.Before, 4), "usd_per_hour_after": round(p.After, 4),
			"usd_per_hour_change": round(p.After-p.Before, 4), "actions": len(p.Actions), "approvers": "", "detail": d.Detail})
	}
	if more {
		res.Notes = append(res.Notes, moreNote)
	}
	return res, nil
}
