package console

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/report"
)

// wantFigures checks that every cell of a's rows (in cols, all when none) appears on the page
// as the API writes it.
func wantFigures(t *testing.T, page string, a report.Answer, cols ...string) {
	t.Helper()
	if len(a.Rows) == 0 {
		t.Fatalf("report %s has no rows over the known history: the test shows nothing", a.Report)
	}
	if len(cols) == 0 {
		cols = a.Columns
	}
	text := html.UnescapeString(page)
	for _, row := range a.Rows {
		for _, c := range cols {
			if v := cell(row, c); v != "" && !strings.Contains(text, v) {
				t.Errorf("%s: %s=%s is not on the page", a.Report, c, v)
			}
		}
	}
	if !strings.Contains(text, a.Currency) || !strings.Contains(text, a.Window.Until) {
		t.Errorf("%s: the page does not say its window (until %s) and currency", a.Report, a.Window.Until)
	}
	for _, n := range a.Notes {
		if !strings.Contains(text, n) {
			t.Errorf("%s: note %q is not on the page", a.Report, n)
		}
	}
}

func TestPagesShowTheReportsFigures(t *testing.T) {
	f := newFixture(t, history(t), nil)
	c := f.client()
	q := func(s string) url.Values { v, _ := url.ParseQuery(s); return v }
	tests := []struct {
		path    string
		reports map[string]url.Values
		cols    map[string][]string // the columns the page shows, by report; all when none
	}{
		{"/", map[string]url.Values{"fleet": q("window=24h")}, nil},
		{"/?window=yesterday", map[string]url.Values{"fleet": q("window=yesterday"), "tokens": q("window=yesterday&aggregate=workload")},
			map[string][]string{"tokens": {"workload", "usd_per_m_tokens", "tokens", "usd"}}},
		{"/decisions?workload=chat&window=yesterday", map[string]url.Values{
			"tokens":    q("since=2026-11-29&until=2026-11-30&aggregate=workload&filter=workload:chat"),
			"decisions": q("window=yesterday&filter=workload:chat")},
			map[string][]string{"tokens": {"usd_per_m_tokens", "tokens", "usd"}, "decisions": {"plan_id", "outcome"}}},
		{"/decisions?window=7d", map[string]url.Values{"decisions": q("window=7d")}, map[string][]string{
			"decisions": {"at", "plan_id", "workload", "usd_per_hour_before", "usd_per_hour_after", "outcome", "cause_kind"}}},
		{"/decisions/p-reclaim-1", map[string]url.Values{"decisions": q("window=30d&plan=p-reclaim-1")}, map[string][]string{
			"decisions": {"at", "plan_id", "workload", "reasons", "usd_per_hour_before", "usd_per_hour_after", "outcome",
				"cause_kind", "cause_id", "cause_at", "cause_detail"}}},
		{"/approvals", map[string]url.Values{"holds": q("window=7d")}, nil},
		{"/budgets", map[string]url.Values{"budget": q("")}, nil},
		{"/costs?window=7d&aggregate=workload", map[string]url.Values{"cost": q("window=7d&aggregate=workload"),
			"tokens": q("window=7d&aggregate=workload"), "savings": q("window=7d&aggregate=workload")}, nil},
		{"/costs?window=yesterday&aggregate=team", map[string]url.Values{"cost": q("window=yesterday&aggregate=team")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			status, page := get(t, c, f.ts.URL+tt.path)
			if status != http.StatusOK {
				t.Fatalf("GET %s: %d\n%s", tt.path, status, page)
			}
			if i := strings.Index(page, `class="error"`); i >= 0 {
				t.Errorf("GET %s shows an error: %s", tt.path, page[i:min(len(page), i+300)])
			}
			for name, rq := range tt.reports {
				wantFigures(t, page, f.answer(t, name, rq), tt.cols[name]...)
			}
		})
	}
}

func TestAPIAnswersAreTheReports(t *testing.T) {
	f := newFixture(t, history(t), nil)
	for path, want := range map[string]report.Answer{
		"/api/v1/reports/cost?window=yesterday&aggregate=workload,gpu": f.answer(t, "cost", url.Values{"window": {"yesterday"}, "aggregate": {"workload,gpu"}}),
		"/api/v1/fleet":                f.answer(t, "fleet", url.Values{}),
		"/api/v1/decisions?window=30d": f.answer(t, "decisions", url.Values{"window": {"30d"}}),
		"/api/v1/budgets":              f.answer(t, "budget", url.Values{}),
	} {
		status, body := get(t, f.client(), f.ts.URL+path)
		if status != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, status, body)
			continue
		}
		wantJSON, _ := json.MarshalIndent(want, "", "  ")
		if strings.TrimSpace(body) != string(wantJSON) {
			t.Errorf("GET %s:\n%s\nwant the report's answer:\n%s", path, body, wantJSON)
		}
	}
}

func TestAPIRefusesMalformedQueries(t *testing.T) {
	f := newFixture(t, history(t), nil)
	tests := []struct {
		path, wantErr string
		wantStatus    int
	}{
		{"/api/v1/reports/cost?window=7x", "window=", 400},
		{"/api/v1/reports/cost?aggregate=colour", "aggregate=colour", 400},
		{"/api/v1/reports/cost?filter=aws", "filter=aws", 400},
		{"/api/v1/reports/cost?windw=7d", "unknown parameter windw=", 400},
		{"/api/v1/reports/cost?since=2026-11-02&until=2026-11-01", "empty", 400},
		{"/api/v1/reports/cost?since=2020-01-01", "at most", 400},
		{"/api/v1/reports/nope", `report "nope"`, 400},
		{"/api/v1/reports/cost?basis=guessed", "basis", 400},
		{"/api/v1/decisions?plan=a%20b", "plan", 400},
		{"/api/v1/decisions/p-none", "not in the window", 404},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			status, body := get(t, f.client(), f.ts.URL+tt.path)
			var e apiErr
			if err := json.Unmarshal([]byte(body), &e); err != nil || status != tt.wantStatus || !strings.Contains(e.Error, tt.wantErr) {
				t.Errorf("GET %s: %d %s; want %d with an error naming %q", tt.path, status, body, tt.wantStatus, tt.wantErr)
			}
		})
	}
	// A page's malformed window is a 400 page that names it, not a 500.
	if status, page := get(t, f.client(), f.ts.URL+"/costs?window=7x"); status != 400 || !strings.Contains(page, "window=") {
		t.Errorf("GET /costs?window=7x: %d\n%s", status, page)
	}
}

// TestThreeClicks scripts "why did the cost per million tokens of chat rise yesterday?": the
// fleet page's $/Mtok of chat, then the decision, then its cause.
func TestThreeClicks(t *testing.T) {
	f := newFixture(t, history(t), nil)
	c := f.client()
	_, fleetPage := get(t, c, f.ts.URL+"/")
	href := linkOf(t, fleetPage, `data-test="mtok-chat"`)
	status, decisions := get(t, c, f.ts.URL+href)
	if status != 200 || !strings.Contains(decisions, `data-test="mtok-day-2026-11-29"`) {
		t.Fatalf("click 1 (%s): %d; want chat's decisions with its $/Mtok by day\n%s", href, status, decisions)
	}
	href = linkOf(t, decisions, `data-test="plan-p-reclaim-1"`)
	status, plan := get(t, c, f.ts.URL+href)
	if status != 200 || !strings.Contains(plan, `data-test="cause"`) || !strings.Contains(plan, "rc-1") {
		t.Fatalf("click 2 (%s): %d; want the plan with its cause, the reclaim notice rc-1\n%s", href, status, plan)
	}
	a := f.answer(t, "decisions", url.Values{"window": {"30d"}, "plan": {"p-reclaim-1"}})
	for _, d := range detail(a.Rows[0], "actions_detail") {
		if want := fmt.Sprintf(`<td data-col="status">%s</td>`, d["status"]); !strings.Contains(plan, want) {
			t.Errorf("the plan's page does not show its action's status %q", d["status"])
		}
	}
}

// linkOf returns the href of the <a> carrying attr.
func linkOf(t *testing.T, page, attr string) string {
	t.Helper()
	i := strings.Index(page, attr)
	if i < 0 {
		t.Fatalf("no %s on the page:\n%s", attr, page)
	}
	start := strings.LastIndex(page[:i], `href="`)
	if start < 0 {
		t.Fatalf("%s has no href", attr)
	}
	start += len(`href="`)
	end := strings.IndexByte(page[start:], '"')
	return html.UnescapeString(page[start : start+end])
}

func TestEmptyHistorySaysWhatToDo(t *testing.T) {
	f := newFixture(t, storetestNew(t), nil)
	for _, path := range []string{"/", "/decisions", "/costs"} {
		status, page := get(t, f.client(), f.ts.URL+path)
		if status != 200 || !strings.Contains(page, "make demo") {
			t.Errorf("GET %s on an empty history: %d; want a hint to run make demo\n%s", path, status, page)
		}
	}
}
