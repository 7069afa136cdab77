package system_test

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/sim"
	"github.com/bursar-dev/bursar/internal/alert"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/placement"
	"github.com/bursar-dev/bursar/internal/slack"
	"github.com/bursar-dev/bursar/internal/slack/slacktest"
	"github.com/bursar-dev/bursar/internal/system"
)

const fleetYAML = `locations:
  - {name: a, provider: aws, region: us-east-1, zones: [us-east-1a], actuator: {kind: sim, launch_delay: 30s}}
workloads:
  - name: svc
    gpu: {models: [H100-80GB], count: 1}
    replicas: {min: 2, max: 2}
    markets: [spot, on_demand]
    cold_start: 30s
`

// holdPolicy asks for approval of any plan adding over 1 USD/h to svc.
const holdPolicy = `name: svc-day
scope: workload=svc
period: day
limit: 100
currency: USD
thresholds:
  - {at: 90}
approve_over: 1/h
approvers: [U0APPROVER]
approval_timeout: 10m
`

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// TestNewAppliesBudgets checks that the one constructor wires the budgets into the arbiter: a
// first plan under a policy asking for approval is held (nothing launched), the same plan
// without the policy is applied. The demo and the replay get the same wiring.
func TestNewAppliesBudgets(t *testing.T) {
	tests := []struct {
		name        string
		policy      string
		wantDesired int
	}{
		{"no policy: the plan is applied", "", 2},
		{"approval over 1/h: the plan waits", holdPolicy, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			env := bustest.Start(t)
			if err := bus.Ensure(ctx, env.JS, bus.Options{LeaseTTL: time.Second}); err != nil {
				t.Fatal(err)
			}
			cfg, err := fleet.Parse([]byte(fleetYAML), "test.yaml")
			if err != nil {
				t.Fatal(err)
			}
			clk := &clock{now: time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)}
			if tt.policy != "" {
				putPolicy(t, env, tt.policy, clk.Now())
			}
			publishPrices(t, env.JS, clk.Now())
			fl := sim.New(cfg, clk.Now)
			sys, err := system.New(ctx, system.Options{Arbiter: arbiter.Options{Config: cfg, JS: env.JS,
				Actuator: actuate.Router{"a": fl}, Clock: clk, Identity: "test", LeaseTTL: time.Second,
				Policy: placement.Policy{MaxHedge: -1}}})
			if err != nil {
				t.Fatal(err)
			}
			if err := sys.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := sys.Close(); err != nil {
					t.Error(err)
				}
			}()
			sys.Service.Step(ctx)
			if desired := desiredReplicas(ctx, t, fl); desired != tt.wantDesired {
				t.Errorf("the fleet was asked for %d replicas, want %d", desired, tt.wantDesired)
			}
		})
	}
}

func putPolicy(t *testing.T, env *bustest.Env, policy string, at time.Time) {
	t.Helper()
	ps, err := budget.ParseFile("policy.yaml", []byte(policy))
	if err != nil {
		t.Fatal(err)
	}
	store, err := budget.OpenStore(context.Background(), env.JS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Put(context.Background(), ps[0], "test", at); err != nil {
		t.Fatal(err)
	}
}

func publishPrices(t *testing.T, js jetstream.JetStream, at time.Time) {
	t.Helper()
	pub := bus.NewPublisher(js)
	for _, m := range []events.Market{events.Spot, events.OnDemand} {
		e := &events.PriceObserved{Meta: events.Meta{At: at}, Provider: "aws", Region: "us-east-1", Zone: "us-east-1a",
			InstanceType: "p5.xlarge", GPUModel: "H100-80GB", GPUCount: 1, GPUMemoryGB: 80, Market: m, USDPerHour: 3,
			Source: "test"}
		if err := pub.Publish(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAlertsPostsFailedActions checks the wiring of the system's alerts: with Slack
// configured, a failed action on the bus reaches the channel.
func TestAlertsPostsFailedActions(t *testing.T) {
	env := bustest.Start(t)
	fake := slacktest.New(t, "xoxb-test")
	sc := slack.Config{Channel: "C0ALERTS01", BotToken: "xoxb-test", APIURL: fake.URL}
	ctx, cancel := context.WithCancel(context.Background())
	part, err := system.Alerts(system.AlertOptions{JS: env.JS, Slack: sc, Leading: func() bool { return true },
		Stale:    alert.Thresholds{Prices: alert.DefaultPriceStale, Telemetry: alert.DefaultTelemetryStale},
		Registry: prometheus.NewRegistry(), Log: slog.New(slog.DiscardHandler)})
	if err != nil || part == nil {
		t.Fatalf("Alerts with Slack: part %v, err %v", part != nil, err)
	}
	done := make(chan error, 1)
	go func() { done <- part(ctx) }()
	defer func() { cancel(); <-done }()
	pub := bus.NewPublisher(env.JS)
	// What is on the bus before the alerts have started is backlog and never posted: publish
	// failures until one is read live.
	for i := 0; len(fake.Messages()) == 0; i++ {
		if i == 100 {
			t.Fatal("no alert posted")
		}
		e := &events.ActionUpdated{Meta: events.Meta{At: time.Now().UTC()}, Workload: "llm", ActionID: "a" + strconv.Itoa(i),
			Status: events.ActionFailed, Kind: "launch", Location: "gcp-usc1", Market: events.Spot, Replicas: 1, Detail: "quota"}
		if err := pub.Publish(ctx, events.Stamp(e)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	m := fake.Messages()[0]
	if m.Channel != "C0ALERTS01" || !strings.HasPrefix(m.Text, "Action failed: launch llm at gcp-usc1: quota") {
		t.Errorf("message = %q in %s", m.Text, m.Channel)
	}
}

func TestAlertsWithoutSlackIsNil(t *testing.T) {
	part, err := system.Alerts(system.AlertOptions{Log: slog.New(slog.DiscardHandler)})
	if err != nil || part != nil {
		t.Fatalf("Alerts without Slack = %v, %v; want no part", part != nil, err)
	}
}
