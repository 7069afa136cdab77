package system_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/sim"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/placement"
	"github.com/bursar-dev/bursar/internal/slack"
	"github.com/bursar-dev/bursar/internal/slack/slacktest"
	"github.com/bursar-dev/bursar/internal/system"
	"github.com/nats-io/nats.go"
)

const (
	clickSecret  = "0123456789abcdef0123456789abcdef"
	clickChannel = "C0FINOPS01"
	appToken     = "xapp-1-test"
)

// arbiters is two arbiters on one embedded NATS, each on its own connection, with one fake
// Slack and one simulated fleet: a leads, b stands by. The leases last a minute, so a lead
// changes only when a test takes it away.
type arbiters struct {
	env      *bustest.Env
	slack    *slacktest.Server
	fleet    *sim.Fleet
	a, b     *system.System
	addrs    [2]string // the HTTP endpoints, when listening
	sc       slack.Config
	clk      *clock
	lockedBy string // a holder put in the lease before the arbiters start: b alone, standing by
}

func startArbiters(t *testing.T, socket bool, ids ...string) *arbiters {
	t.Helper()
	ctx := context.Background()
	r := &arbiters{env: bustest.Start(t), slack: slacktest.New(t, "xoxb-test"),
		clk: &clock{now: time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)}}
	if err := bus.Ensure(ctx, r.env.JS, bus.Options{LeaseTTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	r.sc = slack.Config{Channel: clickChannel, BotToken: "xoxb-test", SigningSecret: clickSecret, APIURL: r.slack.URL}
	if socket {
		r.slack.AppToken, r.sc.AppToken = appToken, appToken
	}
	cfg, err := fleet.Parse([]byte(fleetYAML), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	putPolicy(t, r.env, holdPolicy, r.clk.Now())
	publishPrices(t, r.env.JS, r.clk.Now())
	r.fleet = sim.New(cfg, r.clk.Now)
	systems := make([]*system.System, len(ids))
	for i, id := range ids {
		listen := ""
		if !socket {
			listen = freeAddr(t)
			r.addrs[i] = listen
		}
		_, js := r.env.ConnectAs(t, bus.RoleArbiter)
		sys, err := system.New(ctx, system.Options{Arbiter: arbiter.Options{Config: cfg, JS: js,
			Actuator: actuate.Router{"a": r.fleet}, Clock: r.clk, Identity: id, LeaseTTL: time.Minute,
			Policy: placement.Policy{MaxHedge: -1}}, Slack: r.sc, SlackListen: listen, StandBy: i > 0})
		if err != nil {
			t.Fatal(err)
		}
		if err := sys.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := sys.Close(); err != nil {
				t.Errorf("arbiter %s: %v", id, err)
			}
		})
		systems[i] = sys
	}
	r.a, r.b = systems[0], systems[len(systems)-1]
	return r
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// eventually waits for cond, polling; the deadline only bounds a hung test.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
	}
}

// held steps the leader once, so that it holds svc's first plan for approval, and returns the
// plan's id once the question is asked.
func (r *arbiters) held(t *testing.T) string {
	t.Helper()
	r.a.Service.Step(context.Background())
	eventually(t, "the leader asks about the held plan", func() bool { return len(r.a.Approvals().Open()) == 1 })
	eventually(t, "the question is posted", func() bool { return len(r.posted("chat.postMessage")) == 1 })
	return r.a.Approvals().Open()[0].Plan
}

// posted lists the fake Slack's calls of method.
func (r *arbiters) posted(method string) []slacktest.Message {
	var out []slacktest.Message
	for _, m := range r.slack.Messages() {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// clickJSON is Slack's block_actions payload for user's click of Approve on plan's question,
// the message at ts.
func clickJSON(user, plan, ts string) []byte {
	return fmt.Appendf(nil, `{"type":"block_actions","user":{"id":%q},"api_app_id":"A0BURSARAPP",`+
		`"container":{"type":"message","message_ts":%q,"channel_id":%q},`+
		`"channel":{"id":%[3]q},"message":{"type":"message","ts":%[2]q},`+
		`"actions":[{"action_id":%[4]q,"block_id":"bursar_approval","value":%[5]q,"type":"button"}]}`,
		user, ts, clickChannel, slack.ActionApprove, plan)
}

// question is where the question about the held plan was posted.
func (r *arbiters) question() string { return r.posted("chat.postMessage")[0].TS }

// post sends the click to an arbiter's endpoint as Slack would, signed now.
func post(t *testing.T, addr string, payload []byte) int {
	t.Helper()
	body := []byte("payload=" + url.QueryEscape(string(payload)))
	now := time.Now().Unix()
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/slack/interactions", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(now, 10))
	req.Header.Set("X-Slack-Signature", slack.Sign(clickSecret, now, body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// listening waits until addr takes connections.
func listening(t *testing.T, addr string) {
	t.Helper()
	eventually(t, addr+" listens", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

// TestHTTPClickOnTheStandbyIsDecidedByTheLeader: the Service sends a click to the standby; it
// verifies it and hands it to the leader, which holds the question and decides it once.
func TestHTTPClickOnTheStandbyIsDecidedByTheLeader(t *testing.T) {
	r := startArbiters(t, false, "arbiter-a", "arbiter-b")
	plan := r.held(t)
	approved := watchApprovals(t, r.env)
	listening(t, r.addrs[1])
	// The leader serves the forwarded clicks from its first check of the lead on: a refusal
	// (this is no click) says it does.
	eventually(t, "the leader serves forwarded clicks", func() bool {
		_, err := bus.Ask(context.Background(), r.env.Conn, bus.SlackClickSubject, []byte(`{}`))
		var refused *bus.ReplyError
		return errors.As(err, &refused)
	})
	if code := post(t, r.addrs[1], clickJSON("U0APPROVER", plan, r.question())); code != http.StatusOK {
		t.Fatalf("the standby answered %d", code)
	}
	if open := r.a.Approvals().Open(); len(open) != 0 {
		t.Errorf("still pending on the leader: %+v", open)
	}
	updates := r.posted("chat.update")
	if len(updates) != 1 || !strings.Contains(updates[0].Text, "approved by U0APPROVER") {
		t.Errorf("the question was updated %d times: %+v", len(updates), updates)
	}
	if told := r.posted("chat.postEphemeral"); len(told) != 0 {
		t.Errorf("the clicker was told %+v", told)
	}
	eventually(t, "the approval is in the audit trail", func() bool { return len(approved.of(plan)) > 0 })
	if by := approved.of(plan); len(by) != 1 || by[0] != "U0APPROVER" {
		t.Errorf("approved by %v", by)
	}
	r.a.Service.Step(context.Background())
	if desired := desiredReplicas(context.Background(), t, r.fleet); desired != 2 {
		t.Errorf("the fleet was asked for %d replicas after the approval, want 2", desired)
	}
}

// TestHTTPClickWithoutALeaderIs503: a standby that finds no leader to take a click answers 503,
// so Slack does not take it for handled.
func TestHTTPClickWithoutALeaderIs503(t *testing.T) {
	ctx := context.Background()
	env := bustest.Start(t)
	if err := bus.Ensure(ctx, env.JS, bus.Options{LeaseTTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	kv, err := env.JS.KeyValue(ctx, bus.BucketLeases)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "arbiter", []byte("arbiter-gone")); err != nil { // a leader that died
		t.Fatal(err)
	}
	cfg, err := fleet.Parse([]byte(fleetYAML), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fake := slacktest.New(t, "xoxb-test")
	addr := freeAddr(t)
	sys, err := system.New(ctx, system.Options{Arbiter: arbiter.Options{Config: cfg, JS: env.JS,
		Actuator: actuate.Router{"a": sim.New(cfg, time.Now)}, Identity: "arbiter-b", LeaseTTL: time.Minute},
		Slack:   slack.Config{Channel: clickChannel, BotToken: "xoxb-test", SigningSecret: clickSecret, APIURL: fake.URL},
		StandBy: true, SlackListen: addr})
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
	if sys.Service.Leading() {
		t.Fatal("the standby leads")
	}
	listening(t, addr)
	if code := post(t, addr, clickJSON("U0APPROVER", "plan-1", "1764482400.000001")); code != http.StatusServiceUnavailable {
		t.Fatalf("answered %d, want 503", code)
	}
	if told := fake.Messages(); len(told) != 0 {
		t.Errorf("Slack was told %+v", told)
	}
}

// TestSocketModeOnlyTheLeaderIsConnected: only the leader holds a Socket Mode connection; when it
// loses the lease it closes it and the new leader opens one, over which a click is decided by
// the new leader.
func TestSocketModeOnlyTheLeaderIsConnected(t *testing.T) {
	ctx := context.Background()
	r := startArbiters(t, true, "arbiter-a", "arbiter-b")
	plan := r.held(t)
	approved := watchApprovals(t, r.env)
	eventually(t, "the leader connects", func() bool { return len(r.slack.Sockets()) == 1 })
	first := r.slack.Sockets()[0]
	// A click there is the leader's: it holds the question, so it tells a non-approver why
	// nothing changed (a standby would find nothing pending).
	if _, err := r.slack.Deliver(clickJSON("U0SOMEONE", plan, r.question())); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the clicker is told", func() bool { return len(r.posted("chat.postEphemeral")) == 1 })
	if told := r.posted("chat.postEphemeral")[0].Text; !strings.Contains(told, "Only the budget's approvers") {
		t.Fatalf("the clicker was told %q: the click did not reach the leader", told)
	}
	if got := r.slack.Sockets(); len(got) != 1 || got[0] != first {
		t.Fatalf("open connections %v, want only the leader's %d", got, first)
	}

	// The lease is lost: a's next round finds it gone, b's takes it.
	kv, err := r.env.JS.KeyValue(ctx, bus.BucketLeases)
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Delete(ctx, "arbiter"); err != nil {
		t.Fatal(err)
	}
	r.a.Service.Step(ctx)
	if r.a.Service.Leading() {
		t.Fatal("a still leads without its lease")
	}
	r.b.Service.Step(ctx)
	if !r.b.Service.Leading() {
		t.Fatal("b did not take the free lease")
	}
	eventually(t, "only the new leader is connected", func() bool {
		got := r.slack.Sockets()
		return len(got) == 1 && got[0] != first
	})
	eventually(t, "the new leader asks about the held plan", func() bool { return len(r.b.Approvals().Open()) == 1 })
	if _, err := r.slack.Deliver(clickJSON("U0APPROVER", plan, r.question())); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the new leader decides", func() bool { return len(r.b.Approvals().Open()) == 0 })
	eventually(t, "the approval is in the audit trail", func() bool { return len(approved.of(plan)) > 0 })
	if by := approved.of(plan); len(by) != 1 || by[0] != "U0APPROVER" {
		t.Errorf("approved by %v", by)
	}
	eventually(t, "the question shows the decision", func() bool { return len(r.posted("chat.update")) > 0 })
	if updates := r.posted("chat.update"); len(updates) != 1 || !strings.Contains(updates[0].Text, "approved by U0APPROVER") {
		t.Errorf("the question was updated %d times: %+v", len(updates), updates)
	}
	if asked := r.posted("chat.postMessage"); len(asked) != 1 {
		t.Errorf("the question was posted %d times, want once (the new leader resumes it)", len(asked))
	}
}

// approvals follows the approved steps published on the bus from now on.
type approvals struct {
	mu sync.Mutex
	by map[string][]string // actors by plan
}

func watchApprovals(t *testing.T, env *bustest.Env) *approvals {
	t.Helper()
	w := &approvals{by: map[string][]string{}}
	sub, err := env.Conn.Subscribe("bursar.action.>", func(m *nats.Msg) {
		e, err := events.Decode(m.Data)
		if u, ok := e.(*events.ActionUpdated); err == nil && ok && u.Status == events.ActionApproved {
			w.mu.Lock()
			w.by[u.PlanID] = append(w.by[u.PlanID], u.Actor)
			w.mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := env.Conn.Flush(); err != nil {
		t.Fatal(err)
	}
	return w
}

// of lists who approved plan's steps, one entry per step published.
func (w *approvals) of(plan string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.by[plan])
}
