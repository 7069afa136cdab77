package browsertest_test

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/console"
	"github.com/bursar-dev/bursar/internal/console/browsertest"
)

// site is a console over the demo's history, served on a test server on loopback.
type site struct {
	URL     string
	DataDir string // the console's data dir: its tokens and session key
	History *browsertest.History
}

// demoPolicy is a budget policy over the demo's fleet, so the budgets page has a burn-down: a
// monthly limit with a warning and an approval threshold.
const demoPolicy = `name: demo-monthly
scope: team=assistants
period: month
limit: 500
currency: USD
thresholds:
  - {at: 50%}
  - {at: 100%, on: forecast}
  - {at: 100%, action: require-approval}
approvers: [U0APPROVER]
`

// startConsole serves a read-only console over the demo's history (as report serve does), on
// the history's clock (the day after it), with a budget policy over the demo's fleet.
func startConsole(t *testing.T) *site {
	t.Helper()
	policies, err := budget.ParseFile("demo-monthly.yaml", []byte(demoPolicy))
	if err != nil {
		t.Fatal(err)
	}
	return serveConsole(t, nil, func() []budget.Policy { return policies })
}

// serveConsole serves a console over the demo's history, on the history's clock, deciding holds
// through appr (nil: read-only) under the policies given, as arbiter run serves it.
func serveConsole(t *testing.T, appr console.Approvals, policies func() []budget.Policy) *site {
	t.Helper()
	h := browsertest.DemoHistory(t)
	dir := t.TempDir()
	srv := httptest.NewUnstartedServer(nil)
	c, err := console.New(console.Options{Reports: h.Reports, Fleet: h.Fleet, Policies: policies,
		Approvals: appr, Access: console.Access{Addr: srv.Listener.Addr().String(), DataDir: dir}, Now: h.Now})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = c.Handler()
	srv.Start()
	t.Cleanup(srv.Close)
	return &site{URL: srv.URL, DataDir: dir, History: h}
}

// token issues a console token for identity.
func (s *site) token(t *testing.T, identity string) string {
	t.Helper()
	tok, err := console.IssueToken(s.DataDir, identity)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// login logs tab in with token through the login page, as a person does.
func (s *site) login(t *testing.T, tab *browsertest.Tab, token, next string) {
	t.Helper()
	tab.Open(s.URL + "/login?next=" + next)
	tab.Submit(browsertest.TestSel("login-form"), map[string]string{"token": token})
	if tab.Has(browsertest.TestSel("login-error")) {
		t.Fatalf("login refused: %s", tab.Text(browsertest.TestSel("login-error")))
	}
}

// answer is a report as the API returns it, its numbers kept as written.
type answer struct {
	Report string `json:"report"`
	Window struct {
		Since string `json:"since"`
		Until string `json:"until"`
	} `json:"window"`
	Currency string           `json:"currency"`
	Notes    []string         `json:"notes"`
	Columns  []string         `json:"columns"`
	Rows     []map[string]any `json:"rows"`
}

// api GETs path from the console's API and decodes the answer.
func (s *site) api(t *testing.T, path string) answer {
	t.Helper()
	resp, err := http.Get(s.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		t.Fatalf("GET %s: %s: %s", path, resp.Status, body)
	}
	var a answer
	dec := json.NewDecoder(resp.Body)
	dec.UseNumber()
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return a
}

// text is a cell of the API's row as a page writes it; ok is false for lists and objects,
// which a page lays out rather than prints.
func text(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", true
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}

// sameFigure says whether a page's cell shows the API's value. Numbers compare within a
// relative 1e-9: the page and the API ran the report separately, and ClickHouse may sum a
// column's floats in another order on each run (the last bits move, the figure does not).
func sameFigure(page, api string) bool {
	if page == api {
		return true
	}
	a, errA := strconv.ParseFloat(page, 64)
	b, errB := strconv.ParseFloat(api, 64)
	if errA != nil || errB != nil {
		return false
	}
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// sameRows checks that a table on a page shows the API's rows, in order: every column both
// have, cell by cell. It returns how many figures it compared.
func sameRows(t *testing.T, what string, page []map[string]string, a answer) int {
	t.Helper()
	if len(page) != len(a.Rows) {
		t.Errorf("%s: %d rows on the page, %d in the API's %s", what, len(page), len(a.Rows), a.Report)
		return 0
	}
	n := 0
	for i, row := range a.Rows {
		for _, col := range a.Columns {
			want, ok := text(row[col])
			got, shown := page[i][col]
			if !ok || !shown {
				continue
			}
			n++
			if listColumns[col] {
				got, want = strings.ReplaceAll(got, " ", ""), strings.ReplaceAll(want, " ", "")
			}
			if !sameFigure(got, want) {
				t.Errorf("%s row %d, %s: the page shows %q, the API %q", what, i, col, got, want)
			}
		}
	}
	return n
}

// listColumns hold lists the API writes as comma-separated text and a page lays out as a list
// (", " between items): compared without the spaces.
var listColumns = map[string]bool{"reasons": true}

// yesterday is the window the demo's history fills.
const yesterday = "window=yesterday"

func ymd(t time.Time) string { return t.UTC().Format(time.DateOnly) }

var _ = fmt.Sprint
