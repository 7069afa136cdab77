package console

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/report"
	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// day is the day of the known history; now is the console's clock, the next day at 12:30, so
// the history is "yesterday".
var (
	day = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	now = day.Add(36*time.Hour + 30*time.Minute)
)

// at is a time of the known day, "15:04".
func at(hhmm string) time.Time {
	t, err := time.Parse("15:04", hhmm)
	if err != nil {
		panic(err)
	}
	return day.Add(time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute)
}

// insert writes rows into one table as TabSeparated.
func insert(t *testing.T, st *store.Store, table, columns string, rows ...[]any) {
	t.Helper()
	var b strings.Builder
	for _, r := range rows {
		for i, v := range r {
			if i > 0 {
				b.WriteByte('\t')
			}
			if tm, ok := v.(time.Time); ok {
				v = tm.UTC().Format("2006-01-02 15:04:05.000")
			}
			fmt.Fprint(&b, v)
		}
		b.WriteByte('\n')
	}
	token := fmt.Sprintf("%s/%s/%x", t.Name(), table, sha256.Sum256([]byte(b.String())))
	if err := st.Insert(context.Background(), table, columns, token, []byte(b.String())); err != nil {
		t.Fatalf("seeding %s: %v", table, err)
	}
}

const spotOffer = "aws-use1/us-east-1a/p5.48xlarge/spot"

// history is the console's known day: chat runs 2 replicas of 2 H100s on aws-use1 spot at
// $4/replica-hour from 09:00, $5 from 10:30, seen last at 12:00; it served 4M tokens. At 10:30 a
// reclaim notice on aws-use1 led plan p-reclaim-1 (one replica back, applied); plan p-held-2
// needed approval and waits.
func history(t *testing.T) *store.Store {
	st := storetest.New(t)
	cols := "id, at, version, workload, location, provider, market, offer, gpu_model, gpus_per_replica, " +
		"usd_per_hour, desired, ready, prev_at, prev_ready, prev_usd_per_hour, instances, prev_instances"
	insert(t, st, "replica_state", cols,
		[]any{"rs1", at("09:00"), "1", "chat", "aws-use1", "aws", "spot", spotOffer, "H100-80GB", 2, 4.0, 2, 2, at("09:00"), 0, 0.0, "[]", "[]"},
		[]any{"rs2", at("10:30"), "1", "chat", "aws-use1", "aws", "spot", spotOffer, "H100-80GB", 2, 5.0, 2, 2, at("09:00"), 2, 4.0, "[]", "[]"},
		[]any{"rs3", at("12:00"), "1", "chat", "aws-use1", "aws", "spot", spotOffer, "H100-80GB", 2, 5.0, 2, 2, at("10:30"), 2, 5.0, "[]", "[]"},
	)
	insert(t, st, "tokens_sample", "id, at, version, location, workload, replica, server, prompt_tokens, generation_tokens, "+
		"requests, reset, delta_prompt_tokens, delta_generation_tokens, delta_requests",
		[]any{"ts1", at("09:00"), "1", "aws-use1", "chat", "r1", "vllm", 0, 0, 0, 0, 0, 0, 0},
		[]any{"ts2", at("11:00"), "1", "aws-use1", "chat", "r1", "vllm", 3_000_000, 1_000_000, 100, 0, 3_000_000, 1_000_000, 100},
	)
	insert(t, st, "capacity_reclaimed", "id, at, version, provider, region, location, zone, instance, node, kind, notice_at, deadline, source",
		[]any{"rc-1", at("10:29"), "1", "aws", "us-east-1", "aws-use1", "us-east-1a", "i-0abc", "node-1", "spot_interruption",
			at("10:29"), at("10:31"), "imds"})
	insert(t, st, "plan_decided", "id, at, version, workload, plan_id, actions, usd_per_hour_before, usd_per_hour_after, needs_approval",
		[]any{"pd1", at("10:30"), "1", "chat", "p-reclaim-1",
			"[('a1','scale','aws-use1','" + spotOffer + "','spot',2,1,'reclaim',false)]", 5.0, 10.0, 0},
		[]any{"pd2", at("11:30"), "1", "chat", "p-held-2",
			"[('a2','scale','aws-use1','" + spotOffer + "','spot',3,1,'demand_up',true)]", 10.0, 15.0, 1},
	)
	insert(t, st, "action_updated", "id, at, version, workload, action_id, plan_id, status, kind, location, offer, market, replicas, reason, actor, detail",
		[]any{"au1", at("10:31"), "1", "chat", "a1", "p-reclaim-1", "applied", "scale", "aws-use1", spotOffer, "spot", 2, "reclaim", "arbiter", ""},
		[]any{"au2", at("11:30"), "1", "chat", "a2", "p-held-2", "awaiting_approval", "scale", "aws-use1", spotOffer, "spot", 3, "demand_up", "arbiter", ""},
	)
	return st
}

func testFleet() *fleet.Config {
	return &fleet.Config{
		Locations: []fleet.Location{{Name: "aws-use1", Provider: "aws", Region: "us-east-1", Zones: []string{"us-east-1a"}}},
		Workloads: []fleet.Workload{{Name: "chat", Team: "search", WeightsGB: 100}},
	}
}

func testPolicy() budget.Policy {
	p := budget.Policy{Name: "monthly", Scope: budget.Scope{All: true}, Period: budget.Month, Limit: 1000, Currency: "USD",
		Thresholds: []budget.Threshold{{At: budget.Level{Value: 80, Percent: true}, On: budget.Actual, Action: budget.Notify}}}
	p.Normalize()
	return p
}

// fakeApprovals is the approvals as the lead's adapter over Slack gives them: it records each
// Decide and answers with err.
type fakeApprovals struct {
	mu    sync.Mutex
	holds []Hold
	calls []string
	err   error
}

func (f *fakeApprovals) Open() []Hold {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Hold(nil), f.holds...)
}

func (f *fakeApprovals) Decide(_ context.Context, plan string, approve bool, who string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf("%s %v %s", plan, approve, who))
	return f.err
}

func (f *fakeApprovals) decided() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// held is the hold of p-held-2, which U0APPROVER may decide.
func held() Hold {
	return Hold{Plan: "p-held-2", Workload: "chat", Approvers: []string{"U0APPROVER"}, Deadline: now.Add(20 * time.Minute),
		Before: 10, After: 15, Reasons: []string{"demand_up"}}
}

// fixture is a console over the known history, served by httptest.
type fixture struct {
	srv  *Server
	ts   *httptest.Server
	appr *fakeApprovals
	dir  string
}

// newFixture serves a console over st with a data dir, the fake approvals and edit applied to
// its options.
func newFixture(t *testing.T, st *store.Store, edit func(*Options)) *fixture {
	t.Helper()
	f := &fixture{appr: &fakeApprovals{holds: []Hold{held()}}, dir: t.TempDir()}
	o := Options{Reports: report.Local{Q: st}, Fleet: testFleet(), Policies: func() []budget.Policy { return []budget.Policy{testPolicy()} },
		Approvals: f.appr, Access: Access{Addr: "127.0.0.1:0", DataDir: f.dir}, Now: func() time.Time { return now },
		Log: slog.New(slog.DiscardHandler)}
	if edit != nil {
		edit(&o)
	}
	srv, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = srv
	f.ts = httptest.NewServer(srv.Handler())
	t.Cleanup(f.ts.Close)
	return f
}

// client is a browser-like client that keeps cookies and does not follow redirects.
func (f *fixture) client() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// get fetches path and returns its status and body.
func get(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// post sends a form from this console's origin (as its pages do), with header set.
func (f *fixture) post(t *testing.T, c *http.Client, path string, form url.Values, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.ts.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", f.ts.URL)
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// answer is what the reporter answers for req: what the pages must show.
func (f *fixture) answer(t *testing.T, name string, q url.Values) report.Answer {
	t.Helper()
	req, err := parseQuery(name, q, now)
	if err != nil {
		t.Fatal(err)
	}
	a, err := f.srv.answer(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// storetestNew is an empty store.
func storetestNew(t *testing.T) *store.Store { return storetest.New(t) }
