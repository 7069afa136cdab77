package bus_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
)

// TestServiceAnswersOnlyWellFormedRequestsOfItsUser: a service on the budget admin subjects, as
// the arbiter runs it, asked by each role on a real server. The budget role on its own subject is
// answered with its user and operation; any other role or another user's subject is refused by
// the server, at once and saying so; a subject with an unknown operation and a handler's error
// come back as refusals; nothing unanswered is handled.
func TestServiceAnswersOnlyWellFormedRequestsOfItsUser(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	admin := bus.AdminSubjects{Service: "budget", Ops: []string{"set", "delete"}}
	var handled atomic.Int32
	sub, err := bus.Serve(ctx, env.Conn, bus.Service{
		Name: "test request", Admin: &admin, Queue: "test", Timeout: time.Second,
		Handle: func(_ context.Context, r bus.Request) ([]byte, error) {
			handled.Add(1)
			if string(r.Data) == "fail" {
				return nil, errors.New("policy \"x\": limit must be positive")
			}
			return []byte(r.User + " " + r.Op), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	tests := []struct {
		name        string
		role        string
		subject     string
		data        string
		want        string // the answer
		wantErr     string // in the error
		wantIs      error  // the error wraps it
		wantHandled bool
	}{
		{"own user", bus.RoleBudget, admin.Subject(bus.RoleBudget, "set"), "{}", "budget set", "", nil, true},
		{"collector's role", bus.RoleCollector, admin.Subject(bus.RoleCollector, "set"), "{}", "",
			"the NATS server refused a request on bursar.admin.budget.collector.set", nats.ErrPermissionViolation, false},
		{"report's role as budget", bus.RoleReport, admin.Subject(bus.RoleBudget, "set"), "{}", "",
			"may not ask there", nats.ErrPermissionViolation, false},
		{"another user", bus.RoleBudget, admin.Subject("alice", "delete"), "{}", "",
			"refused a request on bursar.admin.budget.alice.delete", nats.ErrPermissionViolation, false},
		{"unknown operation", bus.RoleBudget, admin.Subject(bus.RoleBudget, "purge"), "{}", "",
			`budget request on "bursar.admin.budget.budget.purge": want bursar.admin.budget.USER.set|delete`, nil, false},
		{"handler error", bus.RoleBudget, admin.Subject(bus.RoleBudget, "set"), "fail", "",
			`policy "x": limit must be positive`, nil, true},
		{"nobody serves", bus.RoleBudget, bus.JobAdminSubject(bus.RoleBudget, "submit"), "{}", "",
			"nobody answers on bursar.admin.job.budget.submit", nats.ErrNoResponders, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nc, _ := env.ConnectAs(t, tt.role)
			before := handled.Load()
			actx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			out, err := bus.Ask(actx, nc, tt.subject, []byte(tt.data))
			if tt.wantErr == "" {
				if err != nil || string(out) != tt.want {
					t.Fatalf("Ask = %q, %v; want %q", out, err, tt.want)
				}
			} else if err == nil || !strings.Contains(err.Error(), tt.wantErr) || (tt.wantIs != nil && !errors.Is(err, tt.wantIs)) {
				t.Fatalf("Ask = %q, %v; want an error with %q wrapping %v", out, err, tt.wantErr, tt.wantIs)
			}
			if got := handled.Load() > before; got != tt.wantHandled {
				t.Errorf("handled %v, want %v", got, tt.wantHandled)
			}
		})
	}
}

// TestAskJoinsTheChunksOfALargeAnswer: an answer larger than a NATS message arrives whole, to
// the report role, whose account imports the query service: an import answers one message
// unless the export says the answer is a stream.
func TestAskJoinsTheChunksOfALargeAnswer(t *testing.T) {
	env := bustest.Start(t)
	big := []byte(strings.Repeat("0123456789", int(env.Conn.MaxPayload())/4))
	sub, err := bus.Serve(context.Background(), env.Conn, bus.Service{Name: "test request", Subject: "bursar.query.test",
		Timeout: time.Second, Workers: 2, Handle: func(context.Context, bus.Request) ([]byte, error) { return big, nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, _ := env.ConnectAs(t, bus.RoleReport)
	out, err := bus.Ask(ctx, nc, "bursar.query.test", nil)
	if err != nil || string(out) != string(big) {
		t.Fatalf("got %d bytes, %v; want %d", len(out), err, len(big))
	}
}

func TestAdminSubjectsParse(t *testing.T) {
	admin := bus.AdminSubjects{Service: "job", Ops: []string{"submit", "cancel"}}
	tests := []struct {
		subject          string
		wantUser, wantOp string
	}{
		{"bursar.admin.job.alice.submit", "alice", "submit"},
		{"bursar.admin.job.alice.cancel", "alice", "cancel"},
		{"bursar.admin.job..submit", "", ""},
		{"bursar.admin.job.alice.purge", "", ""},
		{"bursar.admin.budget.alice.submit", "", ""},
		{"bursar.admin.job.a.b.submit", "", ""},
		{"bursar.admin.job.alice", "", ""},
	}
	for _, tt := range tests {
		user, op, err := admin.Parse(tt.subject)
		if user != tt.wantUser || op != tt.wantOp || (err == nil) != (tt.wantUser != "") {
			t.Errorf("Parse(%q) = %q, %q, %v; want %q, %q", tt.subject, user, op, err, tt.wantUser, tt.wantOp)
		}
		if err != nil && !strings.Contains(err.Error(), "want bursar.admin.job.USER.submit|cancel") {
			t.Errorf("Parse(%q): %v does not say which subject is wanted", tt.subject, err)
		}
	}
}

// FuzzAdminSubjectsParse: a subject Parse accepts is the one its user and operation make.
func FuzzAdminSubjectsParse(f *testing.F) {
	f.Add("bursar.admin.budget.alice.set")
	f.Add("bursar.admin.budget..delete")
	f.Add("bursar.admin.budget.a.b.set")
	admin := bus.AdminSubjects{Service: "budget", Ops: []string{"set", "delete"}}
	f.Fuzz(func(t *testing.T, subject string) {
		user, op, err := admin.Parse(subject)
		if err == nil && (user == "" || strings.Contains(user, ".") || admin.Subject(user, op) != subject) {
			t.Fatalf("accepted %q as user %q op %q", subject, user, op)
		}
	})
}
