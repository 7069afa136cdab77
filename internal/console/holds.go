package console

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/report"
)

// openHold is a pending hold as the approvals page and /api/v1/holds/open show it.
type openHold struct {
	Plan      string    `json:"plan"`
	Workload  string    `json:"workload"`
	Approvers []string  `json:"approvers"`
	Deadline  time.Time `json:"deadline"`
	Before    float64   `json:"usd_per_hour_before"`
	After     float64   `json:"usd_per_hour_after"`
	Reasons   []string  `json:"reasons"`
	// CanDecide: the caller is listed among the approvers, so the page offers the buttons.
	CanDecide bool `json:"can_decide"`
}

// openHolds are the holds pending now, for c; none when the console decides nothing.
func (s *Server) openHolds(c caller) []openHold {
	out := []openHold{}
	if s.o.Approvals == nil {
		return out
	}
	for _, h := range s.o.Approvals.Open() {
		out = append(out, openHold{Plan: h.Plan, Workload: h.Workload, Approvers: h.Approvers, Deadline: h.Deadline.UTC(),
			Before: h.Before, After: h.After, Reasons: h.Reasons, CanDecide: h.listed(c.Who)})
	}
	slices.SortFunc(out, func(a, b openHold) int { return a.Deadline.Compare(b.Deadline) })
	return out
}

// approvalsView is the approvals page: the holds pending now and the holds report's history.
type approvalsView struct {
	Live    bool // the console decides (arbiter run), rather than shows (report serve)
	Open    []openHold
	Holds   report.Answer
	Window  string
	Windows []string
	// Done and Error say what became of the last decision sent from this page.
	Done, Error string
}

// approvalsPage is GET /approvals.
func (s *Server) approvalsPage(w http.ResponseWriter, r *http.Request) {
	s.showApprovals(w, r, http.StatusOK, r.URL.Query().Get("done"), "")
}

func (s *Server) showApprovals(w http.ResponseWriter, r *http.Request, status int, done, failed string) {
	q := pageQuery(r, "7d")
	q.Del("done")
	a, err := s.run(r, "holds", q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	c, _ := s.identify(r)
	s.page(w, r, status, "approvals", approvalsView{Live: s.o.Approvals != nil, Open: s.openHolds(c), Holds: a,
		Window: q.Get("window"), Windows: windows, Done: done, Error: failed})
}

// decideForm is POST /approvals/{plan}/{approve|reject} from the page's buttons: it decides and
// goes back to the page, which says what happened or why nothing did.
func (s *Server) decideForm(w http.ResponseWriter, r *http.Request) {
	d, status, err := s.decide(w, r)
	if err != nil {
		r.URL.RawQuery = ""
		s.showApprovals(w, r, status, "", err.Error())
		return
	}
	http.Redirect(w, r, "/approvals?done="+d.Decision+"+"+d.Plan, http.StatusSeeOther)
}

// budgetsView is the budgets page: the budget report and each policy's burn-down chart.
type budgetsView struct {
	Answer report.Answer
	Charts []burnChart
}

// burnChart is one policy's burn-down: spend from the period's start to now, the forecast to
// its end, and the limit and thresholds as lines. Every figure is the budget report's row, or
// the policy's own limit and thresholds.
type burnChart struct {
	Policy     string      `json:"policy"`
	Currency   string      `json:"currency"`
	Times      []int64     `json:"times"` // period start, now, period end (Unix seconds)
	Spend      []*float64  `json:"spend"`
	Forecast   []*float64  `json:"forecast"`
	Limit      float64     `json:"limit"`
	Thresholds []threshold `json:"thresholds"`
}

type threshold struct {
	Label  string  `json:"label"`
	Amount float64 `json:"amount"`
}

// budgetsPage is GET /budgets.
func (s *Server) budgetsPage(w http.ResponseWriter, r *http.Request) {
	a, err := s.run(r, "budget", r.URL.Query())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.page(w, r, http.StatusOK, "budgets", budgetsView{Answer: a, Charts: s.burnCharts(a)})
}

// burnCharts draws each row of the budget report against its policy.
func (s *Server) burnCharts(a report.Answer) []burnChart {
	now, _ := time.Parse(time.RFC3339, a.Window.Until)
	var out []burnChart
	for _, row := range a.Rows {
		name, _ := row["policy"].(string)
		i := slices.IndexFunc(s.policies(), func(p budget.Policy) bool { return p.Name == name })
		if i < 0 {
			continue
		}
		p := s.policies()[i]
		start, end := budget.Bounds(p.Period, now)
		spend, forecast := number(row["spend"]), number(row["forecast"])
		c := burnChart{Policy: name, Currency: p.Currency, Times: []int64{start.Unix(), now.Unix(), end.Unix()},
			Spend: []*float64{ptr(0), &spend, nil}, Forecast: []*float64{nil, &spend, &forecast}, Limit: p.Limit}
		for _, t := range p.Thresholds {
			amount := t.At.Value
			if t.At.Percent {
				amount = p.Limit * t.At.Value / 100
			}
			c.Thresholds = append(c.Thresholds, threshold{Label: strings.TrimSpace(t.Key() + " " + string(t.Action)), Amount: amount})
		}
		out = append(out, c)
	}
	return out
}

// number reads a figure from a row, as a Go number or a decoded JSON one.
func number(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	case int64:
		return float64(x)
	}
	return 0
}

func ptr(v float64) *float64 { return &v }
