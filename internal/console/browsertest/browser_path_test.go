package browsertest_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/console/browsertest"
)

// TestBrowserThreeClicks scripts the question the console must answer from the fleet page in at
// most three clicks: why did a workload's cost per million tokens rise yesterday? Fleet → the
// workload's $/Mtok (its decisions yesterday, with $/Mtok by day) → a decision → the event that
// caused it, each page's figures checked against the API.
func TestBrowserThreeClicks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo and a browser; skipped with -short")
	}
	t.Parallel()
	s := startConsole(t)
	workload, plan := decisionWithCause(t, s)
	tab := browsertest.NewTab(t)
	tab.Open(s.URL + "/?" + yesterday)
	clicks := 0

	tab.Follow("mtok-" + workload)
	clicks++
	u, err := url.Parse(tab.URL())
	if err != nil {
		t.Fatal(err)
	}
	if u.Path != "/decisions" || u.Query().Get("workload") != workload || u.Query().Get("window") != "yesterday" {
		t.Fatalf("the $/Mtok link of %s led to %s, want its decisions yesterday", workload, tab.URL())
	}
	day := ymd(s.History.End.AddDate(0, 0, -1))
	tokens := s.api(t, "/api/v1/reports/tokens?aggregate=workload&filter=workload:"+workload+
		"&since="+s.History.End.AddDate(0, 0, -1).Format(timeRFC3339)+"&until="+s.History.End.Format(timeRFC3339))
	if len(tokens.Rows) != 1 {
		t.Fatalf("tokens of %s yesterday: %d rows, want 1", workload, len(tokens.Rows))
	}
	want, _ := text(tokens.Rows[0]["usd_per_m_tokens"])
	found := false
	for _, r := range tab.Table(sel("table-mtok-days")) {
		if r["day (UTC)"] == day {
			found = true
			if !sameFigure(r["usd_per_m_tokens"], want) {
				t.Errorf("$/Mtok of %s on %s: the page shows %q, the API %s", workload, day, r["usd_per_m_tokens"], want)
			}
		}
	}
	if !found {
		t.Errorf("no $/Mtok of %s on %s on its decisions page", workload, day)
	}
	tab.Screenshot("path-1-decisions")

	tab.Follow("plan-" + plan)
	clicks++
	dec := s.api(t, "/api/v1/decisions/"+plan+"?"+yesterday)
	if got := tab.Text(sel("plan-id")); got != plan {
		t.Errorf("the decision page shows plan %q, want %s", got, plan)
	}
	row := dec.Rows[0]
	for _, col := range []string{"cause_kind", "cause_id", "cause_at", "cause_detail"} {
		want, _ := text(row[col])
		if got := tab.Text(sel(strings.ReplaceAll(col, "_", "-"))); got != want {
			t.Errorf("%s of plan %s: the page shows %q, the API %q", col, plan, got, want)
		}
	}
	sameActions(t, tab.Table(sel("table-actions")), row["actions_detail"])
	if !tab.Has(sel("cause")) || clicks > 3 {
		t.Errorf("the cause of plan %s is not on its page within three clicks (%d)", plan, clicks)
	}
	tab.Screenshot("path-2-decision")
}

// decisionWithCause picks, from the API, a workload whose $/Mtok the fleet page shows and its
// newest decision yesterday whose cause the history holds.
func decisionWithCause(t *testing.T, s *site) (workload, plan string) {
	t.Helper()
	dec := s.api(t, "/api/v1/decisions?"+yesterday)
	for _, row := range dec.Rows {
		kind, _ := text(row["cause_kind"])
		w, _ := text(row["workload"])
		p, _ := text(row["plan_id"])
		if kind != "" && w != "" && p != "" {
			return w, p
		}
	}
	t.Fatalf("none of the %d decisions of the demo's history names its cause", len(dec.Rows))
	return "", ""
}

const timeRFC3339 = "2006-01-02T15:04:05Z07:00"

// sameActions checks a decision page's actions against the API's actions_detail (a JSON list
// of objects, or its text), in order.
func sameActions(t *testing.T, page []map[string]string, detail any) {
	t.Helper()
	raw, ok := detail.(string)
	if !ok {
		b, err := json.Marshal(detail)
		if err != nil {
			t.Fatal(err)
		}
		raw = string(b)
	}
	var want []map[string]any
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&want); err != nil {
		t.Fatalf("actions_detail %s: %v", raw, err)
	}
	if len(want) == 0 || len(page) != len(want) {
		t.Fatalf("%d actions on the page, %d in the API", len(page), len(want))
	}
	for i, a := range want {
		for _, col := range []string{"kind", "location", "offer", "market", "delta", "reason", "status"} {
			if w, _ := text(a[col]); page[i][col] != w {
				t.Errorf("action %d, %s: the page shows %q, the API %q", i, col, page[i][col], w)
			}
		}
	}
}
