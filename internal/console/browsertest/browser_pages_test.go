package browsertest_test

import (
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/console/browsertest"
)

var sel = browsertest.TestSel

// TestBrowserPages opens every page of the console over the demo's history in a real browser,
// checks that each figure shown equals the same report's row from the API (GET /api/v1/...) of
// the same server, and writes a screenshot of each page.
func TestBrowserPages(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo and a browser; skipped with -short")
	}
	t.Parallel()
	s := startConsole(t)
	t.Run("fleet", func(t *testing.T) {
		t.Parallel()
		tab := browsertest.NewTab(t)
		tab.Open(s.URL + "/?" + yesterday)
		fleet := s.api(t, "/api/v1/fleet?"+yesterday)
		if len(fleet.Rows) == 0 {
			t.Fatal("the fleet report has no rows over the demo's history")
		}
		n := sameRows(t, "fleet", tab.Table(sel("table-fleet")), fleet)
		tokens := s.api(t, "/api/v1/reports/tokens?aggregate=workload&"+yesterday)
		n += sameRows(t, "$/Mtok by workload", tab.Table(sel("table-mtok")), tokens)
		checkMeta(t, tab, "fleet", fleet)
		t.Logf("%d figures compared", n)
		tab.Screenshot("fleet")
		// Live updates: the page redraws its table from /api/v1/fleet every 10 s, with the same
		// figures.
		tab.WaitFor(`document.querySelector('[data-test="fleet-updated"]').textContent.startsWith("updated")`)
		sameRows(t, "fleet, refreshed", tab.Table(sel("table-fleet")), s.api(t, "/api/v1/fleet?"+yesterday))
	})
	t.Run("decisions", func(t *testing.T) {
		t.Parallel()
		tab := browsertest.NewTab(t)
		tab.Open(s.URL + "/decisions?" + yesterday)
		dec := s.api(t, "/api/v1/decisions?"+yesterday)
		if len(dec.Rows) == 0 {
			t.Fatal("the decisions report has no rows over the demo's history")
		}
		page := tab.Table(sel("table-decisions"))
		sameRows(t, "decisions", page, dec)
		for i, row := range dec.Rows {
			if i < len(page) && page[i]["plan"] != row["plan_id"] {
				t.Errorf("decision %d: the page shows plan %q, the API %v (newest first on both)", i, page[i]["plan"], row["plan_id"])
			}
		}
		for _, col := range []string{"usd_per_hour_before", "usd_per_hour_after"} {
			sameSpans(t, tab, sel("table-decisions"), col, dec)
		}
		checkMeta(t, tab, "decisions", dec)
		tab.Screenshot("decisions")
	})
	t.Run("costs", func(t *testing.T) {
		t.Parallel()
		tab := browsertest.NewTab(t)
		// By location: a grouping every section's report takes (idle GPUs are kept by location,
		// node and GPU, not by workload).
		tab.Open(s.URL + "/costs?aggregate=location&" + yesterday)
		for _, name := range []string{"cost", "savings", "tokens", "idle", "jobs"} {
			q := "?aggregate=location&" + yesterday
			if name == "jobs" {
				q = "?" + yesterday // one row per job
			}
			a := s.api(t, "/api/v1/reports/"+name+q)
			section := "[data-test=section-" + name + "] "
			if len(a.Rows) == 0 {
				if !tab.Has(section + sel("empty")) {
					t.Errorf("%s: no rows in the API, and the page does not say it is empty", name)
				}
				continue
			}
			sameRows(t, name, tab.Table(section+sel("table-"+name)), a)
			checkMeta(t, tab, name, a)
		}
		tab.Screenshot("costs")
	})
	t.Run("costs by default", func(t *testing.T) {
		t.Parallel()
		// The page as first opened (its default window and grouping) shows every section: a
		// table or "nothing recorded", never an error.
		tab := browsertest.NewTab(t)
		tab.Open(s.URL + "/costs")
		for _, name := range []string{"cost", "savings", "tokens", "idle", "jobs"} {
			if section := "[data-test=section-" + name + "]"; tab.Has(section + " .error") {
				t.Errorf("costs page, %s: %s", name, tab.Text(section+" .error"))
			}
		}
	})
	t.Run("budgets", func(t *testing.T) {
		t.Parallel()
		tab := browsertest.NewTab(t)
		tab.Open(s.URL + "/budgets")
		a := s.api(t, "/api/v1/budgets")
		if len(a.Rows) == 0 {
			t.Fatal("the budget report has no row for the demo's policy")
		}
		sameRows(t, "budget", tab.Table(sel("table-budget")), a)
		tab.WaitFor(`document.querySelector('[data-test="chart-demo-monthly"] canvas') !== null`)
		tab.Screenshot("budgets")
	})
	t.Run("approvals", func(t *testing.T) {
		t.Parallel()
		tab := browsertest.NewTab(t)
		tab.Open(s.URL + "/approvals?" + yesterday)
		a := s.api(t, "/api/v1/holds?"+yesterday)
		if len(a.Rows) == 0 {
			if !tab.Has(sel("empty")) {
				t.Error("no holds in the API, and the page does not say so")
			}
		} else {
			sameRows(t, "holds", tab.Table(sel("table-holds")), a)
		}
		tab.Screenshot("approvals")
	})
}

// checkMeta checks that a page says the window and currency of its report as the API does.
func checkMeta(t *testing.T, tab *browsertest.Tab, what string, a answer) {
	t.Helper()
	meta := tab.Text(sel("meta-" + a.Report))
	for _, want := range []string{a.Window.Since, a.Window.Until, a.Currency} {
		if !contains(meta, want) {
			t.Errorf("%s: the page's report line %q does not say %q", what, meta, want)
		}
	}
	if got := tab.Texts(sel("notes-"+a.Report) + " li"); strings.Join(got, "\n") != strings.Join(a.Notes, "\n") {
		t.Errorf("%s: the page's notes %q, the API's %q", what, got, a.Notes)
	}
}

// sameSpans checks the figures a page writes inside a cell (spans with data-col, such as a
// decision's $/h before and after) against the API's rows, in order.
func sameSpans(t *testing.T, tab *browsertest.Tab, table, col string, a answer) {
	t.Helper()
	got := tab.Texts(table + " span[data-col=" + col + "]")
	if len(got) != len(a.Rows) {
		t.Errorf("%s: %d on the page, %d rows in the API", col, len(got), len(a.Rows))
		return
	}
	for i, row := range a.Rows {
		if want, _ := text(row[col]); !sameFigure(got[i], want) {
			t.Errorf("row %d, %s: the page shows %q, the API %q", i, col, got[i], want)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
