package report

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/store/chdb"
)

// serve runs the query service over st on a fresh embedded NATS and returns a client of it.
func serve(t *testing.T, st Querier) (*Client, *nats.Conn) {
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
	deadline := time.Now().Add(10 * time.Second) // the subscription is asynchronous
	for {
		dctx, dcancel := context.WithTimeout(context.Background(), time.Second)
		c, err := Dial(dctx, env.Conn)
		dcancel()
		if err == nil {
			return c, env.Conn
		}
		if time.Now().After(deadline) {
			t.Fatalf("no owner answers: %v", err)
		}
	}
}

// requests are one request per report the service runs, with each report's own parameters.
func requests(t *testing.T) []Request {
	o := opts("09:30", "11:15", Location)
	scope, err := budget.ParseScope("workload=chat")
	if err != nil {
		t.Fatal(err)
	}
	warn, _ := budget.ParseLevel("40%")
	pol := budget.Policy{Name: "chat-month", Scope: scope, Period: budget.Month, Limit: 100, Currency: "USD",
		Thresholds: []budget.Threshold{{At: warn, On: budget.Actual, Action: budget.Notify}}}
	var out []Request
	for _, name := range Reports {
		r := NewRequest(name, o)
		switch name {
		case "tokens":
			r.OutputWeight = 3
		case "idle":
			r.Threshold, r.MaxGap = 10, 10*time.Minute
		case "availability":
			r.Target = "1"
		case "commitments":
			r.Percentile, r.Discount = 20, 0.4
		case "budget":
			r.Policies = []budget.Policy{pol}
		case "reclaims", "anomalies":
			r.By = nil
		case "jobs":
			r.By, r.Jobs, r.Teams = nil, []string{"ft-a", "ft-b"}, []string{"research"}
		case "decisions", "holds", "fleet":
			r.By = nil
		}
		out = append(out, r)
	}
	return out
}

// TestQueryServiceAnswersLikeTheStore: every named report, asked of the store's owner over NATS,
// gives the same result, printed the same, as run on the store here.
func TestQueryServiceAnswersLikeTheStore(t *testing.T) {
	st := history(t)
	c, _ := serve(t, st)
	if c.Owner() != "arbiter run (test)" {
		t.Errorf("owner %q", c.Owner())
	}
	for _, req := range requests(t) {
		t.Run(req.Report, func(t *testing.T) {
			direct, err := Local{st}.Run(ctxT(t), req)
			if err != nil {
				t.Fatal(err)
			}
			remote, err := c.Run(ctxT(t), req)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(remote, direct) {
				t.Errorf("over NATS\n%#v\ndirect\n%#v", remote, direct)
			}
			for _, format := range Formats {
				var a, b bytes.Buffer
				if err := Write(&a, format, remote, ""); err != nil {
					t.Fatal(err)
				}
				_ = Write(&b, format, direct, "")
				if a.String() != b.String() {
					t.Errorf("-o %s over NATS\n%s\ndirect\n%s", format, a.String(), b.String())
				}
			}
		})
	}
	if _, err := c.Run(ctxT(t), Request{Report: "cost", Now: at("12:30")}); err == nil || !strings.Contains(err.Error(), "since") {
		t.Errorf("a request without a window: %v, want an error naming since", err)
	}
}

// TestNoSQLOverTheBus replays the attacks of issue 15 as a plain NATS client would send them:
// SQL in a request reads no file and writes none; the owner refuses the request and says what to
// send instead.
func TestNoSQLOverTheBus(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir) // the engine runs in this process: a relative INTO OUTFILE lands here
	_, nc := serve(t, history(t))
	host, _ := os.ReadFile("/etc/hostname")
	attacks := []string{
		`{"sql":"SELECT * FROM file('/etc/hostname','LineAsString')"}`,
		`{"sql":"SELECT count() FROM file('/etc/passwd','LineAsString')"}`,
		`{"sql":"SELECT 'x' INTO OUTFILE 'x.txt'"}`,
		`{"SQL":"SELECT 'x' INTO OUTFILE 'x.txt'"}`,
		`{"report":"cost","sql":"SELECT 'x' INTO OUTFILE 'x.txt'"}`,
		`{"info":true,"Sql":"SELECT * FROM file('/etc/hostname','LineAsString')"}`,
		`{"report":"SELECT * FROM file('/etc/hostname','LineAsString')"}`,
		`{"report":"cost","since":"2026-11-30T09:00:00Z","until":"2026-11-30T12:00:00Z","now":"2026-11-30T12:00:00Z",` +
			`"filter":{"workload":["') UNION ALL SELECT * FROM file('/etc/hostname','LineAsString') --"]}}`,
	}
	for _, a := range attacks {
		m, err := nc.Request(QuerySubject, []byte(a), 30*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		e := m.Header.Get(bus.HeaderError)
		if strings.Contains(a, `"filter"`) {
			// A filter value is a value: the report runs and finds no such workload.
			if e != "" || (len(bytes.TrimSpace(host)) > 0 && bytes.Contains(m.Data, bytes.TrimSpace(host))) {
				t.Errorf("%s: error %q, answer %s", a, e, m.Data)
			}
			continue
		}
		if e == "" || bytes.Contains(m.Data, []byte("line")) {
			t.Errorf("%s was answered: %s", a, m.Data)
		}
		if strings.Contains(strings.ToLower(a), `"sql"`) && !strings.Contains(e, "SQL is not accepted") {
			t.Errorf("%s: error %q does not say SQL is refused", a, e)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("a request wrote %s", entries[0].Name())
	}
}

// TestLargeResultsComeBackInChunks: an answer bigger than a NATS message arrives whole.
func TestLargeResultsComeBackInChunks(t *testing.T) {
	env := bustest.Start(t)
	big := bytes.Repeat([]byte("0123456789"), int(env.Conn.MaxPayload())/4)
	sub, err := bus.Serve(context.Background(), env.Conn, bus.Service{Name: "report request", Subject: QuerySubject,
		Timeout: time.Second, Handle: func(context.Context, bus.Request) ([]byte, error) { return big, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	c := &Client{nc: env.Conn, owner: "test"}
	out, err := c.request(ctxT(t), []byte(`{"info":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, big) {
		t.Errorf("got %d bytes, want %d", len(out), len(big))
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
