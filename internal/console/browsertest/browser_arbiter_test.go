package browsertest_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/sim"
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

// arbiterFleet is one workload of two H100 replicas in one simulated AWS zone: with no replica
// running, the first plan launches both.
const arbiterFleet = `locations:
  - {name: a, provider: aws, region: us-east-1, zones: [us-east-1a], actuator: {kind: sim, launch_delay: 30s}}
workloads:
  - name: svc
    gpu: {models: [H100-80GB], count: 1}
    replicas: {min: 2, max: 2}
    markets: [spot, on_demand]
    cold_start: 30s
`

// holdPolicy asks U0APPROVER to approve any plan adding over 1 USD/h to svc: the first plan,
// two replicas at 3 USD/h, is held.
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

const (
	approver      = "U0APPROVER"
	reader        = "U0READER"
	slackToken    = "xoxb-browser-test"
	slackSecret   = "browser-test-signing-secret"
	slackChannel  = "C0FINOPS01"
	round         = 30 * time.Second // the clock's step between planning rounds: the sim's launch delay
	leaseLifetime = time.Minute      // longer than a browser's steps between two rounds
)

// rig is the arbiter system as `arbiter run` builds it (system.New), on an embedded NATS,
// with budgets holding svc's first plan for approval, Slack configured to a fake with its
// signed interactions endpoint, and the sim actuator counting what it is asked. The test drives
// its rounds on a virtual clock (Step), so what a decision did is known after the round.
type rig struct {
	sys   *system.System
	env   *bustest.Env
	clock *clock
	sim   *countingSim
	slack *slacktest.Server
	url   string // the Slack interactions endpoint
}

func startArbiter(t *testing.T) *rig {
	t.Helper()
	ctx := t.Context()
	env := bustest.Start(t)
	if err := bus.Ensure(ctx, env.JS, bus.Options{LeaseTTL: leaseLifetime}); err != nil {
		t.Fatal(err)
	}
	cfg, err := fleet.Parse([]byte(arbiterFleet), "browser-test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// Near the real time: the console shows the hold's deadline beside its own clock.
	clk := &clock{now: time.Now().UTC().Truncate(time.Second)}
	putPolicy(t, env.JS, holdPolicy, clk.Now())
	publishPrices(t, env.JS, clk.Now())
	a := &rig{env: env, clock: clk, sim: &countingSim{Fleet: sim.New(cfg, clk.Now)},
		slack: slacktest.New(t, slackToken), url: "http://" + freeAddr(t) + "/slack/interactions"}
	a.sys, err = system.New(ctx, system.Options{
		Arbiter: arbiter.Options{Config: cfg, JS: env.JS, Actuator: actuate.Router{"a": a.sim}, Clock: clk,
			Identity: "browser-test", LeaseTTL: leaseLifetime, Policy: placement.Policy{MaxHedge: -1},
			Registry: prometheus.NewRegistry()},
		Slack:       slack.Config{Channel: slackChannel, BotToken: slackToken, SigningSecret: slackSecret, APIURL: a.slack.URL},
		SlackListen: strings.TrimSuffix(strings.TrimPrefix(a.url, "http://"), "/slack/interactions"),
	})
	if err != nil {
		t.Fatal(err)
	}
	// Its own context, not the test's: the test's ends before cleanups, and the system is
	// closed first, then what the service follows is stopped.
	sctx, stop := context.WithCancel(context.Background())
	if err := a.sys.Start(sctx); err != nil {
		stop()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := a.sys.Close(); err != nil {
			t.Errorf("the arbiter system: %v", err)
		}
		stop()
	})
	eventually(t, "the Slack endpoint is up", func() bool {
		resp, err := http.Get(a.url) // GET is refused, but only by a server that is up
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	return a
}

// freeAddr is a loopback address with a port nothing listens on now, for the Slack endpoint
// (the system listens on the address it is given).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// step advances the clock by a round and runs one planning round.
func (a *rig) step(t *testing.T) {
	t.Helper()
	a.clock.Advance(round)
	a.sys.Service.Step(t.Context())
}

// hold runs the first round, whose plan the budget holds, and waits until Slack was asked about
// it and the bus says its actions await approval; it returns the hold's id, the actions it
// holds and Slack's question.
func (a *rig) hold(t *testing.T) (string, []string, slacktest.Message) {
	t.Helper()
	a.sys.Service.Step(t.Context())
	eventually(t, "one plan is held", func() bool { return len(a.sys.Approvals().Open()) == 1 })
	id := a.sys.Approvals().Open()[0].Plan
	var question slacktest.Message
	eventually(t, "Slack is asked", func() bool {
		for _, m := range a.slack.Messages() {
			if m.Method == "chat.postMessage" && strings.Contains(string(m.Blocks), id) {
				question = m
				return true
			}
		}
		return false
	})
	var held []string
	eventually(t, "the held actions are announced", func() bool { held = a.awaiting(t); return len(held) > 0 })
	return id, held, question
}

// click posts the signed block_actions request Slack sends for user's click on button of the
// hold's question, to the system's interactions endpoint; it returns the HTTP status.
func (a *rig) click(t *testing.T, user, button, hold string) int {
	t.Helper()
	raw, err := os.ReadFile("../../slack/testdata/block_actions.json")
	if err != nil {
		t.Fatal(err)
	}
	payload := strings.NewReplacer(approver, user, slack.ActionApprove, button, "PLAN_ID", hold).Replace(string(raw))
	body := []byte("payload=" + url.QueryEscape(payload))
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, a.url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Now().Unix() // the endpoint checks signatures against the real clock, as Slack signs
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("X-Slack-Signature", slack.Sign(slackSecret, ts, body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// countingSim is the sim actuator counting the Scale calls it gets per action id.
type countingSim struct {
	*sim.Fleet
	mu    sync.Mutex
	calls map[string]int
}

func (c *countingSim) Scale(ctx context.Context, tg actuate.Target) error {
	c.mu.Lock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[tg.ActionID]++
	c.mu.Unlock()
	return c.Fleet.Scale(ctx, tg)
}

// scaled is how many times the actuator was asked to apply each action.
func (c *countingSim) scaled() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.calls))
	for id, n := range c.calls {
		out[id] = n
	}
	return out
}

// clock is the arbiter's virtual clock, shared with the sim and the approvals.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// putPolicy writes a budget policy to the bus, as `arbiter budget set` does.
func putPolicy(t *testing.T, js jetstream.JetStream, policy string, at time.Time) {
	t.Helper()
	ps, err := budget.ParseFile("policy.yaml", []byte(policy))
	if err != nil {
		t.Fatal(err)
	}
	store, err := budget.OpenStore(t.Context(), js)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Put(t.Context(), ps[0], "browser test", at); err != nil {
		t.Fatal(err)
	}
}

// publishPrices publishes an H100's spot and on-demand price in the fleet's zone, 3 USD/h each.
func publishPrices(t *testing.T, js jetstream.JetStream, at time.Time) {
	t.Helper()
	pub := bus.NewPublisher(js)
	for _, m := range []events.Market{events.Spot, events.OnDemand} {
		e := &events.PriceObserved{Meta: events.Meta{At: at}, Provider: "aws", Region: "us-east-1", Zone: "us-east-1a",
			InstanceType: "p5.xlarge", GPUModel: "H100-80GB", GPUCount: 1, GPUMemoryGB: 80, Market: m, USDPerHour: 3,
			Source: "browser test"}
		if err := pub.Publish(t.Context(), e); err != nil {
			t.Fatal(err)
		}
	}
}

// eventually polls cond until it holds, failing the test after 20 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
