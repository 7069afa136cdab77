package system_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/sim"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/slack"
	"github.com/bursar-dev/bursar/internal/slack/slacktest"
	"github.com/bursar-dev/bursar/internal/system"
)

// A value in the arbiter's buckets that is not what its key holds reaches the Slack channel
// through the system's wiring: here a server's reply found in the lease key at start.
func TestCorruptValueIsPostedToSlack(t *testing.T) {
	ctx := context.Background()
	env := bustest.Start(t)
	if err := bus.Ensure(ctx, env.JS, bus.Options{LeaseTTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	kv, err := env.JS.KeyValue(ctx, bus.BucketLeases)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "arbiter", []byte(`{"type":"io.nats.jetstream.api.v1.account_info_response"}`)); err != nil {
		t.Fatal(err)
	}
	cfg, err := fleet.Parse([]byte(fleetYAML), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fake := slacktest.New(t, "xoxb-test")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	sc := slack.Config{Channel: "C0ALERTS01", BotToken: "xoxb-test", SigningSecret: "0123456789abcdef0123456789abcdef",
		APIURL: fake.URL}
	sys, err := system.New(ctx, system.Options{Arbiter: arbiter.Options{Config: cfg, JS: env.JS,
		Actuator: actuate.Router{"a": sim.New(cfg, time.Now)}, Identity: "test", LeaseTTL: time.Minute},
		Slack: sc, SlackListen: addr})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- sys.Run(rctx) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, m := range fake.Messages() {
			if strings.HasPrefix(m.Text, "Corrupt value in bursar_leases arbiter") && m.Channel == "C0ALERTS01" {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no alert of the corrupt lease posted; messages: %+v", fake.Messages())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
