package bus_test

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
)

// TestJobsBucketAndRequests: the jobs bucket exists after Ensure (there was none); the arbiter
// CLI's role asks the arbiter on its own job subject and reads the bucket, but writes no key and
// asks on nobody else's subject; collector and report do neither.
func TestJobsBucketAndRequests(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	if err := bus.Ensure(ctx, env.JS, bus.Options{}); err != nil {
		t.Fatal(err)
	}
	kv, err := env.JS.KeyValue(ctx, bus.BucketJobs)
	if err != nil {
		t.Fatalf("no jobs bucket: %v", err)
	}
	if _, err := kv.Put(ctx, "job.tune", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	sub, err := env.Conn.Subscribe(bus.JobAdminSubject("*", "*"), func(m *nats.Msg) { _ = m.Respond([]byte("ok")) })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe() //nolint:errcheck // the test ends
	if err := env.Conn.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		role, user      string
		wantAsk, wantRd bool
	}{
		{bus.RoleBudget, bus.RoleBudget, true, true},
		{bus.RoleBudget, "alice", false, true},
		{bus.RoleCollector, bus.RoleCollector, false, false},
		{bus.RoleReport, bus.RoleReport, false, false},
	} {
		t.Run(tt.role+"/"+tt.user, func(t *testing.T) {
			nc, js := env.ConnectAs(t, tt.role)
			_, err := nc.Request(bus.JobAdminSubject(tt.user, "submit"), []byte(`{}`), wait(tt.wantAsk))
			if (err == nil) != tt.wantAsk {
				t.Errorf("asking as %s for %s: err = %v, want allowed %v", tt.role, tt.user, err, tt.wantAsk)
			}
			rctx, cancel := context.WithTimeout(ctx, wait(tt.wantRd))
			defer cancel()
			ckv, err := js.KeyValue(rctx, bus.BucketJobs)
			if err == nil {
				_, err = ckv.Get(rctx, "job.tune")
			}
			if (err == nil) != tt.wantRd {
				t.Errorf("reading the jobs bucket as %s: err = %v, want allowed %v", tt.role, err, tt.wantRd)
			}
			wctx, wcancel := context.WithTimeout(ctx, wait(false))
			defer wcancel()
			if putKey(wctx, js, bus.BucketJobs) == nil {
				t.Errorf("%s wrote the jobs bucket", tt.role)
			}
		})
	}
}
