package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
)

// approvalPolicy is the soak fleet's budget: no limit it could reach, but every pass that adds
// more than 0.5 USD/h to the workload (an on-demand fallback, or two spot launches at once)
// waits for the approver in Slack, unless it restores what the workload lost: the policy restores
// first, so that is applied at once and the approver answers after, Keep or Go back.
func approvalPolicy(workload string) budget.Policy {
	return budget.Policy{Name: "soak-approvals", Scope: budget.Scope{Workload: workload}, Period: budget.Month,
		Limit: 1e9, Currency: budget.Currency, Thresholds: []budget.Threshold{{At: budget.Level{Value: 80, Percent: true}}},
		ApproveOver: 0.5, Approvers: []string{slackApprover}, ApprovalTimeout: budget.Duration(approvalTimeout)}
}

// holdWatch follows the placement bucket and keeps every hold the books ever held, with its
// actions: the soak's own record of what waited for an approval, beside Slack's and the
// arbiters'. The bucket keeps 8 revisions a book, so a watcher that restarts after a node fault
// still sees each of them.
type holdWatch struct {
	w       *bus.Watcher
	done    chan struct{}
	mu      sync.Mutex
	holds   map[string]arbiter.Hold
	current map[string][]arbiter.Hold // by book key: the holds of its latest revision
	stale   map[string]time.Time      // holds found waiting long past their deadline, and when
	late    map[string]time.Time      // wall time each hold was first seen past its deadline
}

func (r *rig) watchHolds(ctx context.Context) (*holdWatch, error) {
	kv, err := r.js.KeyValue(ctx, bus.BucketPlacement)
	if err != nil {
		return nil, fmt.Errorf("watching the books for holds: %w", err)
	}
	w, err := bus.Watch(ctx, kv, ">", r.log.With("part", "holds")) // through the fault run's restarts
	if err != nil {
		return nil, fmt.Errorf("watching the books for holds: %w", err)
	}
	hw := &holdWatch{w: w, done: make(chan struct{}), holds: map[string]arbiter.Hold{},
		current: map[string][]arbiter.Hold{}, stale: map[string]time.Time{}, late: map[string]time.Time{}}
	go func() {
		defer close(hw.done)
		for e := range w.Updates() {
			if e != nil && e.Operation() == jetstream.KeyValuePut {
				hw.add(e.Key(), e.Value())
			}
		}
	}()
	return hw, nil
}

func (hw *holdWatch) add(key string, value []byte) {
	var b arbiter.Book
	if json.Unmarshal(value, &b) != nil {
		return
	}
	hw.mu.Lock()
	defer hw.mu.Unlock()
	hw.current[key] = b.Holds
	for _, h := range b.Holds {
		if _, ok := hw.holds[h.ID]; !ok {
			hw.holds[h.ID] = h
		}
	}
}

// askWait bounds how long a tick waits for the holds of its round to be asked in Slack.
const askWait = 2 * time.Second

// awaitAsked waits, while Slack answers, until every hold in the books has its question in
// Slack: the arbiters ask from a loop of their own, and a market that moved on first would have
// the approver click a tick or more later in one run than in the other, for the same hold after
// the same delay (the calm and the faulted run then part for no fault's doing). Past askWait the
// tick goes on: an ask the arbiter cannot make is the stale check's to find.
func (r *rig) awaitAsked(ctx context.Context) {
	if r.leader() == nil {
		return
	}
	actx, cancel := context.WithTimeout(ctx, askWait)
	defer cancel()
	for actx.Err() == nil {
		books, err := arbiter.LoadBooks(actx, r.js, bus.BucketPlacement)
		if err != nil || r.slack.askedAll(books) {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// holdGrace is how long past its deadline a hold may still wait, in market time and in wall time:
// the approver clicks every 2 min of market while it waits, and a click past the deadline times
// it out at once where the leader has it pending; where it has not (Slack refused the ask), the
// ask loop rejects it at its next try (every 5 s of wall time, each call bounded by 10 s). A fast
// market runs hundreds of ticks in those seconds, hence both.
const (
	holdGrace     = 15 * time.Minute
	holdGraceWall = 20 * time.Second
)

// checkStale notes every hold still waiting holdGrace after its deadline at now: nobody asks
// about it or times it out, so its ask was lost. Call it only while Slack answers.
func (hw *holdWatch) checkStale(now time.Time) {
	hw.mu.Lock()
	defer hw.mu.Unlock()
	for _, hs := range hw.current {
		for _, h := range hs {
			if h.Deadline.IsZero() || !now.After(h.Deadline) {
				continue
			}
			if _, ok := hw.late[h.ID]; !ok {
				hw.late[h.ID] = time.Now()
			}
			_, seen := hw.stale[h.ID]
			if !seen && now.After(h.Deadline.Add(holdGrace)) && time.Since(hw.late[h.ID]) > holdGraceWall {
				hw.stale[h.ID] = now
			}
		}
	}
}

// waiting says whether the books hold any hold now.
func (hw *holdWatch) waiting() bool {
	hw.mu.Lock()
	defer hw.mu.Unlock()
	for _, hs := range hw.current {
		if len(hs) > 0 {
			return true
		}
	}
	return false
}

// held says whether the books hold hold now.
func (hw *holdWatch) held(hold string) bool {
	hw.mu.Lock()
	defer hw.mu.Unlock()
	for _, hs := range hw.current {
		if slices.ContainsFunc(hs, func(h arbiter.Hold) bool { return h.ID == hold }) {
			return true
		}
	}
	return false
}

func (hw *holdWatch) stop() {
	hw.w.Stop()
	<-hw.done
}

func (hw *holdWatch) all() map[string]arbiter.Hold {
	hw.mu.Lock()
	defer hw.mu.Unlock()
	return maps.Clone(hw.holds)
}

// fates are the action.updated steps of every action in the FLEET stream: status → actor.
type fates map[string]map[events.ActionStatus]string

func (f fates) add(e events.Event) {
	u, ok := e.(*events.ActionUpdated)
	if !ok {
		return
	}
	if f[u.ActionID] == nil {
		f[u.ActionID] = map[events.ActionStatus]string{}
	}
	f[u.ActionID][u.Status] = u.Actor
}

// holdTally is what became of the actions held for approval, by action. Holds asked after a
// restore (restored) count with the others: their actions are go-backs, applied after Go back,
// rejected by Keep, expired when nobody answered (the restore stays).
type holdTally struct {
	holds, restored, actions             int
	applied, rejected, expired, pendingN int
	lost, doubled, unapproved, twice     int
	problems                             []string
}

func (t *holdTally) problem(format string, args ...any) {
	t.problems = append(t.problems, fmt.Sprintf(format, args...))
}

// drainWait is how long the end of a run waits for an approval still pending in the books to be
// asked in Slack and decided there.
const drainWait = 15 * time.Second

// drainHolds settles, through Slack, every approval still pending in the books at the end of the
// market: the approver rejects each, and each must be decided. A hold whose question Slack never
// got, or that no arbiter has pending any more, cannot be: its ask was lost.
func (r *rig) drainHolds(ctx context.Context) (drained map[string]bool, lost []string, err error) {
	books, err := arbiter.LoadBooks(ctx, r.js, bus.BucketPlacement)
	if err != nil {
		return nil, nil, err
	}
	drained = map[string]bool{}
	for _, b := range books {
		for _, h := range b.Holds {
			drained[h.ID] = true
		}
	}
	left := maps.Clone(drained)
	for end := time.Now().Add(drainWait); len(left) > 0 && time.Now().Before(end); {
		if err := r.ensureLeader(ctx); err != nil {
			return nil, nil, err
		}
		r.slack.rejectNow(ctx, r.leader().endpoint, left)
		left = r.slack.stillOpen(left)
		if len(left) > 0 {
			time.Sleep(leaseTTL / 10)
		}
	}
	for id := range left {
		lost = append(lost, id)
	}
	slices.Sort(lost)
	return drained, lost, nil
}

// tallyHolds checks every action that was held: it ends once (applied after the approver's
// Approve, rejected, or expired) or is still pending at the end with a live question; none is
// applied without an Approve clicked before its deadline, none twice.
func (r *rig) tallyHolds(holds map[string]arbiter.Hold, fate fates, drained map[string]bool, lost []string, books map[string]*arbiter.Book) holdTally {
	t := holdTally{holds: len(holds)}
	asks := r.slack.snapshot()
	calls := r.act.callCounts()
	for _, id := range lost {
		t.problem("hold %s was pending at the end with no question Slack could answer (its ask was lost)", id)
	}
	r.holds.mu.Lock()
	for id, at := range r.holds.stale {
		t.problem("hold %s was still waiting at %s, more than %s (and %s of wall time) past its deadline, with nobody asking about it or timing it out (its ask was lost)",
			id, at.UTC().Format(time.RFC3339), holdGrace, holdGraceWall)
	}
	r.holds.mu.Unlock()
	ids := make([]string, 0, len(holds))
	for id := range holds {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		h, a := holds[id], asks[id]
		if h.Restored {
			t.restored++
		}
		approvedInTime := a.clicks > 0 && a.choice != reject && a.clickAt.Before(h.Deadline)
		for _, act := range h.Actions {
			t.actions++
			st, n := fate[act], calls[act]
			switch {
			case n > 1:
				t.doubled++
				t.problem("held action %s (hold %s) reached the actuator %d times", act, id, n)
			case n == 1 && !approvedInTime:
				t.unapproved++
				t.problem("held action %s (hold %s) was applied without an Approve clicked before its deadline %s (approver: %s, first click %s)",
					act, id, h.Deadline.Format(time.RFC3339), a.choice, a.clickAt.Format(time.RFC3339))
			}
			_, yes := st[events.ActionApproved]
			by, no := st[events.ActionRejected]
			_, gone := st[events.ActionExpired]
			_, done := st[events.ActionApplied] // a go-back with nothing above the minimum calls no actuator
			switch {
			case yes && (no || gone):
				t.twice++
				t.problem("held action %s (hold %s) was both approved and rejected", act, id)
			case drained[id]:
				t.pendingN++
			case yes && (n > 0 || done || inFlight(books, act)):
				t.applied++
			case yes:
				t.lost++
				t.problem("held action %s (hold %s) was approved but never applied", act, id)
			case gone || no && by == "timeout":
				t.expired++
			case no:
				t.rejected++
			default:
				t.lost++
				t.problem("held action %s (hold %s) was never decided, and no approval is pending for it at the end", act, id)
			}
		}
	}
	return t
}

// inFlight says whether the books hold action id as recorded or calling: approved, not yet
// applied.
func inFlight(books map[string]*arbiter.Book, id string) bool {
	for _, b := range books {
		if slices.ContainsFunc(b.Actions, func(r arbiter.Record) bool {
			return r.Target.ActionID == id && r.Stage != arbiter.StageAwaiting
		}) {
			return true
		}
	}
	return false
}

// checkHolds tallies the run's holds against the books as the run left them.
func (r *rig) checkHolds(ctx context.Context, fate fates, drained map[string]bool, lost []string) error {
	books, err := arbiter.LoadBooks(ctx, r.js, bus.BucketPlacement)
	if err != nil {
		return err
	}
	r.run.holds = r.tallyHolds(r.holds.all(), fate, drained, lost, books)
	r.slack.mu.Lock()
	r.run.slackPosts, r.run.slackRefused = r.slack.posts, r.slack.refused()
	for _, id := range r.slack.order {
		r.run.asks = append(r.run.asks, *r.slack.asks[id])
	}
	r.slack.mu.Unlock()
	r.run.holdLines = holdLines(r.holds.all(), r.slack.snapshot())
	return nil
}
