package report

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/store/chdb"
)

func TestQueryServiceAnswersLikeTheStore(t *testing.T) {
	st := history(t)
	env := bustest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, env.Conn, st, "arbiter run (test)", slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})

	var c *Client
	deadline := time.Now().Add(10 * time.Second) // the subscription is asynchronous
	for {
		dctx, dcancel := context.WithTimeout(context.Background(), time.Second)
		var err error
		c, err = Dial(dctx, env.Conn)
		dcancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no owner answers: %v", err)
		}
	}
	if c.Owner() != "arbiter run (test)" || c.Table("cost_hourly") != st.Table("cost_hourly") {
		t.Errorf("owner %q, table %q", c.Owner(), c.Table("cost_hourly"))
	}
	direct, err := Cost(ctxT(t), st, opts("09:30", "11:15", Location))
	if err != nil {
		t.Fatal(err)
	}
	remote, err := Cost(ctxT(t), c, opts("09:30", "11:15", Location))
	if err != nil {
		t.Fatal(err)
	}
	if g, w := strings.Join(got(remote, "usd", "gpu_hours"), "\n"), strings.Join(got(direct, "usd", "gpu_hours"), "\n"); g != w {
		t.Errorf("over NATS\n%s\ndirect\n%s", g, w)
	}

	// A result bigger than a NATS message comes back whole, in chunks.
	out, err := c.Query(ctxT(t), "SELECT number, repeat('x', 1000) AS pad FROM numbers(3000)")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), "\n"); n != 3000 || len(out) <= int(env.Conn.MaxPayload()) {
		t.Errorf("%d rows in %d bytes, want 3000 rows over %d bytes", n, len(out), env.Conn.MaxPayload())
	}

	tests := []struct{ name, sql, want string }{
		{"write", "DROP TABLE " + st.Table("cost_hourly"), "only SELECT"},
		{"two statements", "SELECT 1; DROP TABLE x", "one statement"},
		{"bad sql", "SELECT nope FROM " + st.Table("cost_hourly"), "arbiter run (test)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := c.Query(ctxT(t), tt.sql); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

func TestDialWithoutOwner(t *testing.T) {
	env := bustest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := Dial(ctx, env.Conn); !errors.Is(err, ErrNoOwner) {
		t.Errorf("Dial with nobody serving: %v, want ErrNoOwner", err)
	}
}

func TestOwnedStoreErrorNamesTheOwner(t *testing.T) {
	owned := &chdb.OwnedError{Dir: "/var/lib/bursar/clickhouse", Owner: chdb.Owner{Program: "arbiter run", PID: 4242, Host: "gpu-1"}}
	err := explainOwned(owned, "nats://user:secret@127.0.0.1:4222", ErrNoOwner)
	for _, want := range []string{`"arbiter run" (pid 4242 on gpu-1`, "/var/lib/bursar/clickhouse", "--nats", QuerySubject} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "secret") {
		t.Errorf("error shows the NATS password: %v", err)
	}
	if !errors.As(err, &owned) {
		t.Error("the OwnedError is not wrapped")
	}
	if other := errors.New("disk full"); explainOwned(other, "", nil) != other {
		t.Error("other errors are changed")
	}
}

func FuzzReadOnly(f *testing.F) {
	for _, s := range []string{"SELECT 1", "with x as (select 1) select * from x", "DROP TABLE t", "SELECT 1; DROP TABLE t", " select 1 ;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		if ReadOnly(sql) != nil {
			return
		}
		s := strings.TrimSuffix(strings.TrimSpace(sql), ";")
		if strings.Contains(s, ";") {
			t.Errorf("accepted two statements: %q", sql)
		}
		low := strings.ToLower(strings.TrimSpace(s))
		if !strings.HasPrefix(low, "select") && !strings.HasPrefix(low, "with") {
			t.Errorf("accepted a non-SELECT: %q", sql)
		}
	})
}

func FuzzParseWindow(f *testing.F) {
	for _, s := range [][3]string{{"", "", "7d"}, {"2026-11-01", "2026-11-30T09:00", ""}, {"x", "", ""}, {"", "", "-3h"}} {
		f.Add(s[0], s[1], s[2])
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, since, until, period string) {
		w, err := ParseWindow(since, until, period, now)
		if err == nil && !w.Until.After(w.Since) {
			t.Errorf("empty window %v accepted", w)
		}
	})
}
