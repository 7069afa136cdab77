package budget

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/fleet"
)

// adminEnv is a server with the embedded budget role and a password user "alice" holding the
// budget permissions for her own name, as an operator's cluster gives each person, and the
// arbiter's side answering writes.
func adminEnv(t *testing.T) (*bustest.Env, *Store, string) {
	t.Helper()
	pw := rand.Text()
	env := bustest.StartWith(t, bus.User{Role: bus.RoleBudget, Name: "alice", Password: pw, Permissions: bus.BudgetPermissions("alice")})
	ctx := context.Background()
	s, err := OpenStore(ctx, env.JS)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &fleet.Config{Locations: []fleet.Location{{Name: "aws-use1", Provider: "aws"}},
		Workloads: []fleet.Workload{{Name: "llm-inference"}}}
	sub, err := ServeAdmin(ctx, env.Conn, s, func() time.Time { return t0 }, slog.New(slog.DiscardHandler),
		WithFleet(func() *fleet.Config { return cfg }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return env, s, pw
}

// connectAlice connects as alice with her password, using the budget commands' inbox.
func connectAlice(t *testing.T, env *bustest.Env, pw string) *nats.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, _, err := bus.Connect(ctx, env.Server.ClientURL(), t.Name(), slog.New(slog.DiscardHandler),
		nats.UserInfo("alice", pw), nats.CustomInboxPrefix(bus.InboxPrefix(bus.RoleBudget)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// TestAdminRecordsTheAuthenticatedIdentity: each write is recorded under the NATS user the
// server let publish on its subject, and a user asking on another user's subject is refused
// and stores nothing.
func TestAdminRecordsTheAuthenticatedIdentity(t *testing.T) {
	env, s, pw := adminEnv(t)
	budgetConn, _ := env.ConnectAs(t, bus.RoleBudget)
	alice := connectAlice(t, env, pw)
	tests := []struct {
		name   string
		conn   *nats.Conn
		as     string // the subject's user token
		policy string
		ok     bool
	}{
		{"budget role as itself", budgetConn, bus.RoleBudget, "p-budget", true},
		{"alice as herself", alice, "alice", "p-alice", true},
		{"budget role as alice", budgetConn, "alice", "p-forged-alice", false},
		{"alice as the budget role", alice, bus.RoleBudget, "p-forged-budget", false},
		{"budget role as the arbiter", budgetConn, bus.RoleArbiter, "p-forged-arbiter", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := NewAdmin(tt.conn, tt.as)
			if err != nil {
				t.Fatal(err)
			}
			p := validPolicy()
			p.Name = tt.policy
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_, _, err = a.Put(ctx, p)
			if tt.ok != (err == nil) {
				t.Fatalf("Put as %s: err = %v, want ok %v", tt.as, err, tt.ok)
			}
			h, err := s.History(context.Background(), tt.policy)
			if !tt.ok {
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("a refused write was stored: %+v, %v", h, err)
				}
				return
			}
			if err != nil || len(h) != 1 || h[0].Actor != tt.as || !h[0].At.Equal(t0) {
				t.Fatalf("history = %+v, %v; want one revision by %s at %s", h, err, tt.as, t0)
			}
		})
	}
}

func TestAdminDeleteRecordsTheIdentity(t *testing.T) {
	env, s, pw := adminEnv(t)
	a, err := NewAdmin(connectAlice(t, env, pw), "alice")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := a.Delete(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleting a missing policy: err = %v, want ErrNotFound", err)
	}
	p := validPolicy()
	if _, err := s.Put(ctx, p, "bob", t0); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Delete(ctx, p.Name); err != nil {
		t.Fatal(err)
	}
	h, err := s.History(ctx, p.Name)
	if err != nil || len(h) != 2 || !h[1].Deleted || h[1].Actor != "alice" {
		t.Fatalf("history = %+v, %v", h, err)
	}
}

func TestAdminWithoutArbiterSaysSo(t *testing.T) {
	env := bustest.Start(t)
	nc, _ := env.ConnectAs(t, bus.RoleBudget)
	a, err := NewAdmin(nc, bus.RoleBudget)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Put(context.Background(), validPolicy()); err == nil || !strings.Contains(err.Error(), `is "arbiter run" up?`) {
		t.Fatalf("err = %v", err)
	}
}

func TestNewAdminRefusesUsersThatCannotNameASubject(t *testing.T) {
	for _, u := range []string{"", "a.b", "*", ">", "a b", "a\n"} {
		if _, err := NewAdmin(nil, u); err == nil {
			t.Errorf("NewAdmin(%q) accepted", u)
		}
	}
}

func TestDecodeAdminRefusesMalformedRequests(t *testing.T) {
	policy, err := json.Marshal(adminRequest{Policy: &Policy{Name: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	set := bus.BudgetAdminSubject("alice", "set")
	tests := []struct {
		name, subject, body, wantErr string
	}{
		{"other prefix", "bursar.admin.plan.alice.set", string(policy), "want bursar.admin.budget.USER.set|delete"},
		{"no user", "bursar.admin.budget.set", string(policy), "want"},
		{"empty user", "bursar.admin.budget..set", string(policy), "want"},
		{"unknown op", bus.BudgetAdminSubject("alice", "purge"), string(policy), "want"},
		{"extra token", bus.BudgetAdminSubject("alice", "set.x"), string(policy), "want"},
		{"not json", set, "{", "decoding the request"},
		{"json array", set, "[]", "decoding the request"},
		{"set without policy", set, `{"name":"x"}`, "a set carries only a policy"},
		{"set with a name too", set, `{"name":"x","policy":{"name":"x"}}`, "a set carries only a policy"},
		{"delete without name", bus.BudgetAdminSubject("alice", "delete"), `{}`, "a delete only a name"},
		{"delete with a policy", bus.BudgetAdminSubject("alice", "delete"), string(policy), "a delete only a name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, err := decodeAdmin(tt.subject, []byte(tt.body))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
	actor, op, req, err := decodeAdmin(set, policy)
	if err != nil || actor != "alice" || op != opSet || req.Policy == nil || req.Policy.Name != "x" {
		t.Fatalf("decodeAdmin(%s) = %q %q %+v %v", set, actor, op, req, err)
	}
}

// FuzzDecodeAdmin feeds the write request decoder arbitrary subjects and bodies: it must not
// panic, and what it accepts names one user token and carries what its operation needs.
func FuzzDecodeAdmin(f *testing.F) {
	f.Add(bus.BudgetAdminSubject("alice", "set"), []byte(`{"policy":{"name":"x","limit":1}}`))
	f.Add(bus.BudgetAdminSubject("budget", "delete"), []byte(`{"name":"x"}`))
	f.Add("bursar.admin.budget.a.b.set", []byte(`{}`))
	f.Add("bursar.admin.budget..delete", []byte(`{"name":""}`))
	f.Fuzz(func(t *testing.T, subject string, data []byte) {
		actor, op, req, err := decodeAdmin(subject, data)
		if err != nil {
			return
		}
		if actor == "" || strings.Contains(actor, ".") || subject != bus.BudgetAdminSubject(actor, op) {
			t.Fatalf("accepted subject %q as user %q op %q", subject, actor, op)
		}
		switch op {
		case opSet:
			if req.Policy == nil || req.Name != "" {
				t.Fatalf("accepted set %+v", req)
			}
		case opDelete:
			if req.Name == "" || req.Policy != nil {
				t.Fatalf("accepted delete %+v", req)
			}
		default:
			t.Fatalf("accepted op %q", op)
		}
	})
}

// TestAdminAnswersWithTheScopeWarning: a budget whose scope matches no workload warned only in
// the arbiter's log. The arbiter's answer carries the warning to the CLI that set it; the policy
// is stored all the same, and a scope that matches gets none.
func TestAdminAnswersWithTheScopeWarning(t *testing.T) {
	env, s, pw := adminEnv(t)
	a, err := NewAdmin(connectAlice(t, env, pw), "alice")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, tt := range []struct {
		scope, want string
	}{{"workload=llm-inferense", "scope workload=llm-inferense matches no workload of the fleet file (workloads: llm-inference)"},
		{"workload=llm-inference", ""}} {
		p := validPolicy()
		p.Name, p.Scope = "p-"+strings.TrimPrefix(tt.scope, "workload="), mustScope(t, tt.scope)
		_, warns, err := a.Put(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(warns, "; "); (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("scope %s: warnings %q, want %q", tt.scope, got, tt.want)
		}
		if _, err := s.History(ctx, p.Name); err != nil {
			t.Errorf("scope %s: not stored: %v", tt.scope, err)
		}
	}
}

func mustScope(t *testing.T, s string) Scope {
	t.Helper()
	sc, err := ParseScope(s)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}
