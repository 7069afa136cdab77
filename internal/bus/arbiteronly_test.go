package bus_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
)

// TestOnlyArbitersForwardSlackClicks: a standby's click reaches the leader's responder; no other
// role's key can ask there (forge a click) nor answer in the leader's place (read one).
func TestOnlyArbitersForwardSlackClicks(t *testing.T) {
	env := bustest.Start(t)
	const subject = bus.SlackClickSubject
	standby, _ := env.ConnectAs(t, bus.RoleArbiter)
	sub, err := env.Conn.Subscribe(subject, func(m *nats.Msg) { _ = m.Respond([]byte("ok")) })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe() //nolint:errcheck // the test ends
	if err := env.Conn.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := standby.Request(subject, []byte(`{}`), wait(true)); err != nil {
		t.Fatalf("an arbiter's request on %s: %v", subject, err)
	}
	for _, role := range []string{bus.RoleCollector, bus.RoleReport, bus.RoleBudget} {
		t.Run(role, func(t *testing.T) {
			nc, _ := env.ConnectAs(t, role)
			if _, err := nc.Request(subject, []byte(`{}`), wait(false)); err == nil {
				t.Fatalf("%s asked on %s", role, subject)
			}
			fake, err := nc.SubscribeSync(subject)
			if err != nil {
				return // refused at once
			}
			if err := nc.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := env.Conn.Publish(subject, []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
			if _, err := fake.NextMsg(wait(false)); err == nil {
				t.Fatalf("%s received a click meant for the leader", role)
			}
		})
	}
}

// TestSlackClicksAreNotStored: no stream covers the subject, so a forwarded click is a request
// only, never kept.
func TestSlackClicksAreNotStored(t *testing.T) {
	env := bustest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if name, err := env.JS.StreamNameBySubject(ctx, bus.SlackClickSubject); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Fatalf("stream %q covers %s (err %v)", name, bus.SlackClickSubject, err)
	}
}
