package arbiter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/placement"
	"github.com/bursar-dev/bursar/internal/slack"
)

// Asker posts an approval request and later reports the decision through its OnDecision hook;
// *slack.Approvals is one.
type Asker interface {
	Ask(ctx context.Context, req slack.Request) error
}

// Decider applies or drops an action held for approval; *Service is one.
type Decider interface {
	Approve(ctx context.Context, workload, actionID, who string) error
	Reject(ctx context.Context, workload, actionID, who string) error
}

// BudgetOptions configure Budgets.
type BudgetOptions struct {
	Config *fleet.Config
	JS     jetstream.JetStream
	Asker  Asker
	Clock  Clock // default: the wall clock
	Log    *slog.Logger
	// OnAlert, when set, is called after each budget.alert is published (a Slack alert).
	OnAlert func(context.Context, *events.BudgetAlert)
}

// Budgets is the arbiter's Gate and Caps over the budget policies in the KV bucket. It keeps the
// policies current, folds replica.state events into the spend ledger, evaluates the policies on
// every planning pass (publishing budget.alert on a crossing), and sends each action a policy
// holds back to the Asker, applying or dropping it when the decision comes. Alerts are only
// published from Caps, which the arbiter calls while leading, so a standby never alerts.
type Budgets struct {
	o    BudgetOptions
	gate *budget.Gate
	pub  *bus.Publisher

	ready    chan struct{} // closed once the policies are loaded and the ledger caught up
	loaded   bool          // policies read once
	caughtUp bool          // the ledger replayed the period so far
	mu       sync.Mutex
	ledger   budget.Ledger
	asks     []ask
	wake     chan struct{}
	decider  Decider
}

var (
	_ Gate = (*Budgets)(nil)
	_ Caps = (*Budgets)(nil)
)

// NewBudgets returns budgets; Run starts them and Ready says when they can answer.
func NewBudgets(o BudgetOptions) *Budgets {
	if o.Clock == nil {
		o.Clock = wallClock{}
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	teams := map[string]string{}
	for _, w := range o.Config.Workloads {
		teams[w.Name] = w.Team
	}
	return &Budgets{o: o, gate: budget.NewGate(), pub: bus.NewPublisher(o.JS), ready: make(chan struct{}),
		ledger: budget.Ledger{Teams: teams}, wake: make(chan struct{}, 1)}
}

// Attach names who applies decisions; call it with the Service before approvals can arrive.
func (b *Budgets) Attach(d Decider) {
	b.mu.Lock()
	b.decider = d
	b.mu.Unlock()
}

// Ready waits until the policies are loaded and the ledger has replayed the spend so far, so the
// first plan is judged on them. Start the arbiter's Service after it.
func (b *Budgets) Ready(ctx context.Context) error {
	select {
	case <-b.ready:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for budget policies and spend to load: %w", ctx.Err())
	}
}

// Run keeps policies and spend current and posts approval requests until ctx ends.
func (b *Budgets) Run(ctx context.Context) error {
	store, err := budget.OpenStore(ctx, b.o.JS)
	if err != nil {
		return err
	}
	if err := b.follow(ctx); err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() {
		errc <- store.Watch(ctx, func(ps []budget.Policy) {
			b.gate.SetPolicies(ps)
			b.mu.Lock()
			b.loaded = true
			b.checkReady()
			b.mu.Unlock()
		})
	}()
	b.askLoop(ctx)
	if err := <-errc; err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// checkReady closes ready once both inputs are in; b.mu is held.
func (b *Budgets) checkReady() {
	if b.loaded && b.caughtUp {
		select {
		case <-b.ready:
		default:
			close(b.ready)
		}
	}
}

// earliest is the start of the longest period a policy can have (a week may begin last month).
func earliest(t time.Time) time.Time {
	w, _ := budget.Bounds(budget.Week, t)
	m, _ := budget.Bounds(budget.Month, t)
	if w.Before(m) {
		return w
	}
	return m
}

// follow replays the FLEET stream's replica.state and budget.alert events from the start of the
// longest period (by the stream's wall-clock timestamps) and keeps following: replica states
// feed the ledger, past alerts keep a restarted arbiter from announcing a crossing twice.
func (b *Budgets) follow(ctx context.Context) error {
	start := earliest(time.Now()).Add(-24 * time.Hour)
	cons, err := b.o.JS.OrderedConsumer(ctx, bus.Fleet, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{"bursar.fleet.>", "bursar.budget.>"},
		DeliverPolicy:  jetstream.DeliverByStartTimePolicy, OptStartTime: &start})
	if err != nil {
		return fmt.Errorf("following spend on %s: %w", bus.Fleet, err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return fmt.Errorf("following spend on %s: %w", bus.Fleet, err)
	}
	if info.NumPending == 0 {
		b.mu.Lock()
		b.caughtUp = true
		b.checkReady()
		b.mu.Unlock()
	}
	cc, err := cons.Consume(b.fold)
	if err != nil {
		return fmt.Errorf("following spend on %s: %w", bus.Fleet, err)
	}
	go func() { <-ctx.Done(); cc.Stop() }()
	return nil
}

func (b *Budgets) fold(m jetstream.Msg) {
	e, err := events.Decode(m.Data())
	b.mu.Lock()
	defer b.mu.Unlock()
	if err == nil {
		switch e := e.(type) {
		case *events.ReplicaState:
			b.ledger.Observe(e)
		case *events.BudgetAlert:
			b.gate.Restore([]*events.BudgetAlert{e})
		}
	}
	if meta, err := m.Metadata(); err == nil && meta.NumPending == 0 && !b.caughtUp {
		b.caughtUp = true
		b.checkReady()
	}
}

// Caps evaluates every policy on the spend so far, publishes the alerts that crossed, and returns
// the caps the planner must keep. Before the ledger caught up it evaluates nothing.
func (b *Budgets) Caps(ctx context.Context) ([]placement.Budget, error) {
	now := b.o.Clock.Now()
	b.mu.Lock()
	if !b.caughtUp {
		b.mu.Unlock()
		return nil, errors.New("budget spend is still loading")
	}
	since := earliest(now)
	alerts := b.gate.Evaluate(now, b.ledger.Intervals(since))
	b.ledger.Prune(since.Add(-24 * time.Hour))
	b.mu.Unlock()
	var errs []error
	for _, a := range alerts {
		if err := b.pub.Publish(ctx, events.Stamp(a)); err != nil {
			errs = append(errs, fmt.Errorf("publishing budget.alert of %s: %w", a.Policy, err))
			continue
		}
		b.o.Log.Info("budget threshold", "policy", a.Policy, "basis", a.Basis, "threshold", a.Threshold,
			"spend", a.Spend, "limit", a.Limit, "cleared", a.Cleared)
		if b.o.OnAlert != nil {
			b.o.OnAlert(ctx, a)
		}
	}
	if len(errs) > 0 {
		b.o.Log.Warn("budget alerts not published; they are sent again on the next pass", "err", errors.Join(errs...))
	}
	return b.gate.Caps(now), nil
}

// Review puts one action to the budgets as a plan of one change. The arbiter reviews action by
// action, so approve_over applies to each action's own rise. An action held for approval is
// queued for the Asker; Review itself never blocks (the arbiter holds its lock).
func (b *Budgets) Review(ctx context.Context, p Proposal) (Verdict, error) {
	now := b.o.Clock.Now()
	plan := budget.Plan{ID: p.Action.ID, Workload: p.Workload, Team: p.Team, Changes: []budget.Change{b.change(p)}}
	v := b.gate.Review(ctx, plan, now)
	switch v.Outcome {
	case budget.Blocked:
		b.o.Log.Info("action blocked by budget", "workload", p.Workload, "action", p.Action.ID,
			"reasons", strings.Join(v.Reasons, "; "))
		return Block, nil
	case budget.NeedsApproval:
		b.queue(p, v, now)
		return Pending, nil
	}
	return Allow, nil
}

// change is the action as a budget sees it: where its spend lands (the offer's location, the
// first part of the arbiter's offer ids) and how much it changes.
func (b *Budgets) change(p Proposal) budget.Change {
	a := p.Action
	c := budget.Change{ActionID: a.ID, Kind: a.Kind, Reason: a.Reason, USDPerHour: a.CostPerHour,
		BelowMinimum: a.NeedsApproval}
	if a.Kind == placement.ActionScale {
		return c
	}
	loc, _, _ := cutOffer(a.Offer)
	if l, ok := b.o.Config.Location(loc); ok {
		c.Location, c.Provider = l.Name, l.Provider
	}
	return c
}
