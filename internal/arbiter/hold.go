package arbiter

import (
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/placement"
)

// Hold is one approval a gate asked for: the actions it covers wait in StageAwaiting until it is
// decided, and are then applied or dropped together. It is stored in the book of every workload
// it covers, beside the actions, so a new leader finds it and asks again with the same deadline
// and the same Slack message.
type Hold struct {
	ID        string            `json:"id"`
	Actions   []string          `json:"actions"`
	Owners    map[string]string `json:"owners"` // action id → workload
	Reasons   []string          `json:"reasons,omitempty"`
	Policies  []string          `json:"policies,omitempty"`
	Approvers []string          `json:"approvers,omitempty"`
	Timeout   time.Duration     `json:"timeout,omitempty"`
	AskedAt   time.Time         `json:"asked_at"`
	Deadline  time.Time         `json:"deadline,omitzero"` // zero: none (nobody times it out)
	// Plan is what the question shows: the held actions, the cost per hour before and after.
	Plan events.PlanDecided `json:"plan"`
	// Channel and TS say where the question was posted, once it was.
	Channel string `json:"channel,omitempty"`
	TS      string `json:"ts,omitempty"`
	// Restored marks a question asked after the fact: restores of lost capacity were applied at
	// once, and its actions are their go-backs (ReasonGoBack). Go back approves them, Keep or no
	// answer by the deadline rejects them.
	Restored bool `json:"restored,omitempty"`
	// Remedy is the cost anomaly whose remedy the hold proposes (RemedyRequest); empty for a
	// budget gate's hold.
	Remedy string `json:"remedy,omitempty"`
}

// Workloads are the workloads the hold covers, sorted.
func (h Hold) Workloads() []string {
	var out []string
	for _, w := range h.Owners {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	slices.Sort(out)
	return out
}

// holdID names a hold by its actions, so the same hold asked again keeps its id.
func holdID(actions []string) string {
	ids := slices.Sorted(slices.Values(actions))
	h := fnv.New128a()
	for _, id := range ids {
		h.Write([]byte(id))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Declined remembers an action that was rejected, so the planner's next passes, which propose it
// again under a new id, do not ask again until Until. A rejected discretionary rise does not keep
// a restore of lost capacity back (Restores: which of the two was rejected).
type Declined struct {
	Kind     string    `json:"kind"`
	Reason   string    `json:"reason"`
	Offer    string    `json:"offer,omitempty"`
	Until    time.Time `json:"until"`
	Restores bool      `json:"restores,omitempty"`
}

// declined says whether an action like a (a restore, or not) was rejected lately.
func (b *Book) declined(a placement.Action, restores bool, now time.Time) bool {
	return slices.ContainsFunc(b.Declined, func(d Declined) bool {
		return d.Kind == string(a.Kind) && d.Reason == string(a.Reason) && d.Offer == a.Offer && now.Before(d.Until) &&
			(d.Restores || !restores)
	})
}

func (b *Book) decline(r Record, now, until time.Time) {
	b.Declined = slices.DeleteFunc(b.Declined, func(d Declined) bool { return !now.Before(d.Until) })
	b.Declined = append(b.Declined, Declined{Kind: r.Target.Kind, Reason: r.Target.Reason, Offer: r.Target.Offer, Until: until,
		Restores: r.Restores})
}

// ErrNoHold says no approval with that id waits in the books: decided already, or unknown.
var ErrNoHold = errors.New("no such approval is pending")

// errNotLeading refuses a decision an arbiter cannot apply.
var errNotLeading = errors.New("this arbiter does not lead; the leader applies approvals")

// step is an action.updated to publish once the books are saved; actor empty: this arbiter.
type step struct {
	rec      Record
	workload string
	status   events.ActionStatus
	actor    string
	detail   string
}

// Decide applies an approval's outcome to every action of the hold, in every book it covers:
// approved actions take effect at once (a cut below the minimum becomes drains of the most
// expensive replicas), rejected ones are dropped and not asked again for a while. who is the
// deciding Slack user or "timeout".
func (s *Service) Decide(ctx context.Context, id string, approve bool, who string) error {
	var touched []string
	var steps []step
	var err error
	s.bk.with(func(l *ledger) { touched, steps, err = l.decideHold(id, approve, who) })
	if err != nil {
		return err
	}
	for _, w := range touched {
		if err := s.bk.flush(ctx, w); err != nil {
			return err
		}
	}
	for _, st := range steps {
		if st.actor == "" {
			st.actor = s.ann.actor
		}
		s.ann.announceBy(st.rec, st.workload, st.status, st.actor, st.detail)
	}
	for _, w := range touched {
		s.exec.dispatch(w)
	}
	s.log.Info("approval decided", "hold", id, "approved", approve, "by", who, "workloads", touched)
	return nil
}

// decideHold applies the decision on hold id to the books in memory and touches them; it returns
// the workloads touched and the steps to announce once they are durable.
func (l *ledger) decideHold(id string, approve bool, who string) ([]string, []step, error) {
	if !l.leading {
		return nil, nil, errNotLeading
	}
	now := l.clock.Now()
	var touched []string
	var steps []step
	for _, w := range l.workloadNames() {
		b := l.books[w]
		i := slices.IndexFunc(b.Holds, func(h Hold) bool { return h.ID == id })
		if i < 0 {
			continue
		}
		h := b.Holds[i]
		b.Holds = slices.Delete(b.Holds, i, i+1)
		steps = append(steps, l.settleHold(b, h, approve, who, now)...)
		touched = append(touched, w)
		l.touch(b)
	}
	if len(touched) == 0 {
		return nil, nil, fmt.Errorf("approval %s: %w", id, ErrNoHold)
	}
	return touched, steps, nil
}

// settleHold applies the decision to b's actions of hold h; it returns the steps to announce.
func (l *ledger) settleHold(b *Book, h Hold, approve bool, who string, now time.Time) []step {
	var out []step
	for _, id := range h.Actions {
		rec := b.record(id)
		if h.Owners[id] != b.Workload || rec == nil || rec.Stage != StageAwaiting {
			continue
		}
		r := *rec
		switch {
		case !approve && r.Target.Reason == ReasonGoBack: // kept: nothing was proposed to decline
			b.finish(id)
			out = append(out, step{r, b.Workload, events.ActionRejected, who, "kept"})
		case !approve:
			b.finish(id)
			quiet := h.Timeout
			if quiet <= 0 {
				quiet = budget.DefaultApprovalTimeout
			}
			b.decline(r, now, now.Add(quiet))
			out = append(out, step{r, b.Workload, events.ActionRejected, who, ""})
		case r.Target.Reason == ReasonGoBack:
			out = append(out, l.goBack(b, id, who)...)
		case r.Target.Kind == string(placement.ActionScale):
			out = append(out, l.cut(b, id, who)...)
		default:
			l.enact(b, rec, now)
			out = append(out, step{*rec, b.Workload, events.ActionApproved, who, ""})
		}
	}
	return out
}

// cut carries out an approved budget cut below the workload's minimum: its live replicas go,
// launching ones first and then the most expensive, until the cut's target count remains.
func (l *ledger) cut(b *Book, id, who string) []step {
	return l.drainAway(b, id, who, cutVictims(b, b.record(id).Target.Replicas), "cut", "nothing left to cut")
}

// drainAway carries out the approved action id, a cut or a go-back (what), as drains of victims
// grouped by replica group (an actuator sets one group's count): the first group keeps the
// action's id, the others get ids derived from it. With no victims the action is done at once,
// applied with the detail none.
func (l *ledger) drainAway(b *Book, id, who string, victims []Rep, what, none string) []step {
	base := *b.record(id)
	if len(victims) == 0 {
		b.finish(id)
		return []step{{base, b.Workload, events.ActionApproved, who, ""}, {base, b.Workload, events.ActionApplied, "", none}}
	}
	var groups []actuate.Group
	byGroup := map[actuate.Group][]Rep{}
	for _, r := range victims {
		g := r.group(b.Workload)
		if _, ok := byGroup[g]; !ok {
			groups = append(groups, g)
		}
		byGroup[g] = append(byGroup[g], r)
	}
	var out []step
	for i, g := range groups {
		r := base
		r.Stage, r.Target.Group, r.Target.Location, r.Target.Market = StageRecorded, g, g.Location, g.Market
		r.Target.Offer, r.Drain, r.CostPerHour = byGroup[g][0].Offer, nil, 0
		for _, v := range byGroup[g] {
			r.Drain = append(r.Drain, v.ID)
			r.CostPerHour -= v.PricePerHour
		}
		for j := range b.Replicas {
			if slices.Contains(r.Drain, b.Replicas[j].ID) {
				b.Replicas[j].State = placement.StateDraining
			}
		}
		r.Target.Replicas = b.Count(g)
		detail := ""
		if i == 0 {
			*b.record(id) = r
		} else {
			r.Target.ActionID, r.Hold = retireID(b.Workload, id+"/"+g.String()), ""
			b.Actions = append(b.Actions, r)
			detail = "part of " + what + " " + id + ", approved by " + who
		}
		out = append(out, step{r, b.Workload, events.ActionApproved, who, detail})
	}
	return out
}

// cutVictims are the replicas a cut to keep replicas removes: launching ones first (they serve
// nothing yet), then the most expensive.
func cutVictims(b *Book, keep int) []Rep {
	var live []Rep
	for _, r := range b.Replicas {
		if r.State == placement.StateLaunching || r.State == placement.StateReady {
			live = append(live, r)
		}
	}
	slices.SortStableFunc(live, func(x, y Rep) int {
		if (x.State == placement.StateLaunching) != (y.State == placement.StateLaunching) {
			if x.State == placement.StateLaunching {
				return -1
			}
			return 1
		}
		if x.PricePerHour != y.PricePerHour {
			if x.PricePerHour > y.PricePerHour {
				return -1
			}
			return 1
		}
		return cmp.Compare(x.ID, y.ID)
	})
	return live[:max(len(live)-max(keep, 0), 0)]
}

// Posted records where a hold's question was posted, in every book holding it, so a new leader
// resumes that message rather than posting another.
func (s *Service) Posted(ctx context.Context, id, channel, ts string) error {
	var touched []string
	leading := false
	s.bk.with(func(l *ledger) {
		if leading = l.leading; !leading {
			return
		}
		for _, w := range l.workloadNames() {
			b := l.books[w]
			i := slices.IndexFunc(b.Holds, func(h Hold) bool { return h.ID == id })
			if i < 0 || b.Holds[i].TS == ts {
				continue
			}
			b.Holds[i].Channel, b.Holds[i].TS = channel, ts
			l.touch(b)
			touched = append(touched, w)
		}
	})
	if !leading {
		return errNotLeading
	}
	for _, w := range touched {
		if err := s.bk.flush(ctx, w); err != nil {
			return err
		}
	}
	return nil
}

// holds lists every hold in the books once, by id.
func (l *ledger) holds() []Hold {
	var out []Hold
	for _, w := range l.workloadNames() {
		for _, h := range l.books[w].Holds {
			if !slices.ContainsFunc(out, func(o Hold) bool { return o.ID == h.ID }) {
				out = append(out, h)
			}
		}
	}
	return out
}

// ask hands holds to the gate's asker, if it has one (Ask does not block).
func ask(ctx context.Context, g Gate, hs []Hold) {
	a, ok := g.(Asker)
	if !ok {
		return
	}
	for _, h := range hs {
		a.Ask(ctx, h)
	}
}
