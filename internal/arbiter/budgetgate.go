package arbiter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/placement"
)

// Approvals put a hold's question to the people who may approve it (or resume the question
// already posted, at h.Channel and h.TS) and say where it is; the decision comes back through
// Budgets.Decided. It is the arbiter's port for approvals, in its own terms; Slack is one adapter
// (system.SlackApprovals).
type Approvals interface {
	Ask(ctx context.Context, h Hold) (Message, error)
}

// Message is where a question was posted: a channel and the message's id in it.
type Message struct{ Channel, TS string }

// Decider applies or drops the actions of a hold, and records where its question was posted;
// *Service is one.
type Decider interface {
	Decide(ctx context.Context, holdID string, approve bool, who string) error
	Posted(ctx context.Context, holdID, channel, ts string) error
}

// BudgetOptions configure Budgets.
type BudgetOptions struct {
	Config    *fleet.Config
	JS        jetstream.JetStream
	Approvals Approvals
	Clock     Clock // default: the wall clock
	Log       *slog.Logger
	// OnAlert, when set, is called after each budget.alert is published (a Slack alert), off the
	// planning pass and with a deadline (outsideCall).
	OnAlert func(context.Context, *events.BudgetAlert)
	// OnCorrupt, when set, is told of each value of the budgets bucket that is not a policy
	// revision (the bucket's watch writes the last revision back over it); see Service.ReportCorrupt.
	OnCorrupt func(Corruption)
}

// Budgets is the arbiter's Gate and Caps over the budget policies in the KV bucket. It keeps the
// policies current, folds replica.state events into the spend ledger, evaluates the policies on
// every planning pass (the alert loop publishes a crossing as budget.alert), and sends each action
// a policy holds back to its Approvals, applying or dropping it when the decision comes. Alerts are
// only queued by Caps, which the arbiter calls while leading, so a standby never alerts.
type Budgets struct {
	o    BudgetOptions
	gate *budget.Gate
	pub  *bus.Publisher

	ready  chan struct{}                  // closed once the policies are loaded and the ledger caught up
	alerts *retrying[*events.BudgetAlert] // crossed, not yet published; locks itself
	asking asking                         // the approvals side: holds to ask about, who decides; locks itself

	mu       sync.Mutex // guards loaded, caughtUp and the ledger
	loaded   bool       // policies read once
	caughtUp bool       // the ledger replayed the period so far
	ledger   budget.Ledger
}

var (
	_ Gate  = (*Budgets)(nil)
	_ Asker = (*Budgets)(nil)
	_ Caps  = (*Budgets)(nil)
)

// NewBudgets returns budgets; Run starts them and Ready says when they can answer.
func NewBudgets(o BudgetOptions) *Budgets {
	if o.Clock == nil {
		o.Clock = WallClock{}
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	teams := map[string]string{}
	for _, w := range o.Config.Workloads {
		teams[w.Name] = w.Team
	}
	return &Budgets{o: o, gate: budget.NewGate(), pub: bus.NewPublisher(o.JS), ready: make(chan struct{}),
		ledger: budget.Ledger{Teams: teams}, alerts: newRetrying[*events.BudgetAlert](), asking: newAsking()}
}

// Position returns every policy's position as of the last evaluation (the leader's: a standby
// evaluates none) and the replica intervals running now, for the spend and burn gauges.
func (b *Budgets) Position() ([]budget.Status, []budget.Interval) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.gate.Statuses(), b.ledger.Running()
}

// Intervals returns the priced replica intervals that overlap [since, ∞), the open ones still
// running, for the spend counter (system.SpendMetrics).
func (b *Budgets) Intervals(since time.Time) []budget.Interval {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ledger.Intervals(since)
}

// Policies returns the budget policies in force, as the store holds them now.
func (b *Budgets) Policies() []budget.Policy { return b.gate.Policies() }

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

// Run keeps policies and spend current, posts approval requests and answers budget writes
// (budget.ServeAdmin: the arbiter alone writes the bucket) until ctx ends.
func (b *Budgets) Run(ctx context.Context) error {
	store, err := budget.OpenStore(ctx, b.o.JS)
	if err != nil {
		return err
	}
	store.OnCorrupt = b.storeCorrupt
	fleetFile := func() *fleet.Config { return b.o.Config } // the writer hears of a scope no workload matches
	admin, err := budget.ServeAdmin(ctx, b.o.JS.Conn(), store, b.o.Clock.Now, b.o.Log, budget.WithFleet(fleetFile))
	if err != nil {
		return err
	}
	defer admin.Unsubscribe() //nolint:errcheck // the connection may be closing at exit
	if err := b.follow(ctx); err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() {
		warned := map[string]string{}
		errc <- store.Watch(ctx, b.o.Log, func(ps []budget.Policy) {
			b.warnPolicies(ps, warned)
			b.gate.SetPolicies(ps)
			b.mu.Lock()
			b.loaded = true
			b.checkReady()
			b.mu.Unlock()
		})
	}()
	go b.alerts.run(ctx, b.sendAlerts)
	b.asking.queue.run(ctx, b.ask)
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

// forecastHistory is how much spend before the longest period starts the budgets keep: the
// forecast (internal/forecast) learns its hour-of-week profile and its own error from it, so a
// month's forecast is seasonal from the month's first day, not only after a week of it. Actual
// spend still counts from each period's start (budget.Measure).
const forecastHistory = 14 * 24 * time.Hour

// earliest is the start of the spend the budgets keep: the longest period a policy can have (a
// week may begin last month) and forecastHistory before it.
func earliest(t time.Time) time.Time {
	w, _ := budget.Bounds(budget.Week, t)
	m, _ := budget.Bounds(budget.Month, t)
	if w.Before(m) {
		m = w
	}
	return m.Add(-forecastHistory)
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
	evs, _ := events.DecodeAll(m.Data()) // what does not decode is the recorder's to dead-letter
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range evs {
		if err := events.CheckSubject(e.EventType(), m.Subject()); err != nil {
			b.o.Log.Warn("budgets: not counting an event on a subject of another type", "err", err)
			continue // the Service's own follow dead-letters what it reads; budget.> is the arbiter's alone
		}
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

// Caps evaluates every policy on the spend so far, queues the alerts that crossed for the alert
// loop, and returns the caps the planner must keep. Before the ledger caught up it evaluates
// nothing.
func (b *Budgets) Caps(context.Context) ([]placement.Budget, error) {
	now := b.o.Clock.Now()
	b.mu.Lock()
	if !b.caughtUp {
		b.mu.Unlock()
		return nil, errors.New("budget spend is still loading")
	}
	since := earliest(now)
	ivs := b.ledger.Intervals(since) // copies: the forecasts run outside the lock
	b.ledger.Prune(since.Add(-24 * time.Hour))
	b.mu.Unlock()
	alerts := b.gate.Evaluate(now, ivs)
	b.queueAlerts(alerts)
	return b.gate.Caps(now), nil
}

// Review puts a pass's plans to the budgets as one: each policy judges the net change in its
// scope, a move's launch with the saving of the replica it replaces. Review never blocks (the
// arbiter holds its lock); held actions are asked about through Ask once recorded.
func (b *Budgets) Review(ctx context.Context, p Proposal) (Ruling, error) {
	plans := make([]budget.Plan, 0, len(p.Plans))
	for _, wp := range p.Plans {
		plans = append(plans, b.plan(wp))
	}
	v := b.gate.Review(ctx, plans, p.At)
	if len(v.Blocked) > 0 {
		b.o.Log.Info("actions blocked by budget", "actions", v.Blocked, "reasons", strings.Join(v.Reasons, "; "))
	}
	for _, h := range v.Told {
		b.o.Log.Info("lost capacity restored at once; its approvers are asked after", "actions", h.Actions,
			"reasons", strings.Join(h.Reasons, "; "))
	}
	return Ruling{Blocked: v.Blocked, Holds: holdsOf(v.Holds), Told: holdsOf(v.Told)}, nil
}

// holdsOf are the gate's holds in the arbiter's terms, to be completed by it.
func holdsOf(hs []budget.Hold) []Hold {
	var out []Hold
	for _, h := range hs {
		out = append(out, Hold{Actions: h.Actions, Reasons: h.Reasons, Policies: h.Policies, Approvers: h.Approvers, Timeout: h.Timeout})
	}
	return out
}

// plan is a workload's plan as a budget sees it: each action's change where it lands, and for a
// launch that replaces replicas their saving, where they run; restores marked as such.
func (b *Budgets) plan(wp WorkloadPlan) budget.Plan {
	p := budget.Plan{ID: wp.PlanID, Workload: wp.Workload, Team: wp.Team}
	for _, a := range wp.Actions {
		restores := slices.Contains(wp.Restores, a.ID)
		c := b.change(a)
		c.Restores = restores
		p.Changes = append(p.Changes, c)
		for _, r := range wp.Replaced[a.ID] {
			c := budget.Change{ActionID: a.ID, Kind: placement.ActionDrain, Reason: a.Reason, USDPerHour: -r.PricePerHour,
				Restores: restores}
			c.Location, c.Provider = b.where(r.Location)
			p.Changes = append(p.Changes, c)
		}
	}
	return p
}

// change is an action as a budget sees it: where its spend lands (the offer's location, the
// first part of the arbiter's offer ids) and how much it changes.
func (b *Budgets) change(a placement.Action) budget.Change {
	c := budget.Change{ActionID: a.ID, Kind: a.Kind, Reason: a.Reason, USDPerHour: a.CostPerHour,
		BelowMinimum: a.NeedsApproval}
	if a.Kind == placement.ActionScale {
		return c
	}
	loc, _, _ := cutOffer(a.Offer)
	c.Location, c.Provider = b.where(loc)
	return c
}

// where is a location and its provider, when the fleet knows it.
func (b *Budgets) where(loc string) (string, string) {
	if l, ok := b.o.Config.Location(loc); ok {
		return l.Name, l.Provider
	}
	return "", ""
}
