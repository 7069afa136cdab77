package console

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/report"
)

// windows are the windows the pages offer in their select.
var windows = []string{"today", "yesterday", "24h", "7d", "30d", "thismonth", "lastmonth"}

// aggregates are the dimensions the costs page offers to group by.
var aggregates = []string{"workload", "team", "location", "provider", "market", "gpu"}

// pageQuery is r's query with window defaulted, so every page says which window it shows.
func pageQuery(r *http.Request, window string) url.Values {
	q := r.URL.Query()
	if q.Get("window") == "" && q.Get("since") == "" {
		q.Set("window", window)
	}
	return q
}

// run parses q for report name and runs it.
func (s *Server) run(r *http.Request, name string, q url.Values) (report.Answer, error) {
	req, err := parseQuery(name, q, s.now())
	if err != nil {
		return report.Answer{}, badRequest{err}
	}
	return s.answer(r.Context(), req)
}

// fleetView is the fleet page: the fleet report and each workload's $/Mtok over the same window.
type fleetView struct {
	Window  string
	Windows []string
	Fleet   report.Answer
	Tokens  section
	// Mtok has one row per workload in the fleet or the tokens report: its tokens row, if any.
	Mtok []workloadMtok
}

// workloadMtok is a workload's row of the tokens report by workload; Row is nil when it served
// no tokens in the window, and the page still links to its decisions.
type workloadMtok struct {
	Workload string
	Row      cli.Row
}

// mtokRows lists every workload of the fleet and of the tokens report, in name order.
func mtokRows(fl report.Answer, tok section) []workloadMtok {
	rows := map[string]cli.Row{}
	for _, r := range fl.Rows {
		rows[cell(r, "workload")] = nil
	}
	for _, r := range tok.Answer.Rows {
		rows[cell(r, "workload")] = r
	}
	out := make([]workloadMtok, 0, len(rows))
	for _, w := range slices.Sorted(maps.Keys(rows)) {
		if w != "" {
			out = append(out, workloadMtok{Workload: w, Row: rows[w]})
		}
	}
	return out
}

// fleetPage is GET /: the fleet now. Its table refreshes from /api/v1/fleet.
func (s *Server) fleetPage(w http.ResponseWriter, r *http.Request) {
	q := pageQuery(r, "24h")
	fl, err := s.run(r, "fleet", q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	tq := cloneValues(q)
	tq.Set("aggregate", "workload")
	tq.Del("plan")
	tok, err := s.run(r, "tokens", tq)
	ts := sectionOf("tokens", tok, err)
	s.page(w, r, http.StatusOK, "fleet", fleetView{Window: q.Get("window"), Windows: windows, Fleet: fl, Tokens: ts, Mtok: mtokRows(fl, ts)})
}

// decisionsView is the decisions page: the timeline, and for one workload its $/Mtok by day.
type decisionsView struct {
	Workload, Window string
	Windows          []string
	Workloads        []string
	Decisions        report.Answer
	Days             []mtokDay
}

// mtokDay is one day's $/Mtok of a workload, from the tokens report over that day.
type mtokDay struct {
	Date   string
	Answer report.Answer
	Err    string
}

// decisionsPage is GET /decisions?workload=&window=.
func (s *Server) decisionsPage(w http.ResponseWriter, r *http.Request) {
	q := pageQuery(r, "7d")
	workload := q.Get("workload")
	q.Del("workload")
	if workload != "" {
		q.Add("filter", "workload:"+workload)
	}
	a, err := s.run(r, "decisions", q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := decisionsView{Workload: workload, Window: q.Get("window"), Windows: windows, Workloads: s.workloads(), Decisions: a}
	if workload != "" {
		v.Days = s.days(r, workload, a.Window.Until)
	}
	s.page(w, r, http.StatusOK, "decisions", v)
}

// days runs the tokens report for workload over each of the seven days up to until, oldest
// first, so a rise shows beside the days before it.
func (s *Server) days(r *http.Request, workload, until string) []mtokDay {
	end, err := time.Parse(time.RFC3339, until)
	if err != nil {
		return nil
	}
	end = end.Truncate(24 * time.Hour)
	if t, _ := time.Parse(time.RFC3339, until); t.After(end) {
		end = end.Add(24 * time.Hour) // include the day until falls in
	}
	out := make([]mtokDay, 7)
	var wg sync.WaitGroup
	for i := range out {
		since := end.AddDate(0, 0, i-7)
		out[i].Date = since.Format(time.DateOnly)
		wg.Go(func() {
			q := url.Values{"since": {since.Format(time.RFC3339)}, "until": {since.AddDate(0, 0, 1).Format(time.RFC3339)},
				"filter": {"workload:" + workload}, "aggregate": {"workload"}}
			a, err := s.run(r, "tokens", q)
			out[i].Answer = a
			if err != nil {
				out[i].Err = err.Error()
			}
		})
	}
	wg.Wait()
	return out
}

// decisionPage is GET /decisions/{plan}: one plan, its actions and its cause.
func (s *Server) decisionPage(w http.ResponseWriter, r *http.Request) {
	q := pageQuery(r, "30d")
	q.Set("plan", r.PathValue("plan"))
	a, err := s.run(r, "decisions", q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	status := http.StatusOK
	if len(a.Rows) == 0 {
		status = http.StatusNotFound
	}
	s.page(w, r, status, "decision", struct {
		Plan   string
		Window string
		Answer report.Answer
	}{r.PathValue("plan"), q.Get("window"), a})
}

// apiDecision is GET /api/v1/decisions/{plan}: the decisions report for that plan (404 when
// the window holds none).
func (s *Server) apiDecision(w http.ResponseWriter, r *http.Request) {
	q := pageQuery(r, "30d")
	q.Set("plan", r.PathValue("plan"))
	a, err := s.run(r, "decisions", q)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	if len(a.Rows) == 0 {
		writeJSON(w, http.StatusNotFound, apiErr{Error: "plan " + r.PathValue("plan") + ": not in the window " + a.Window.Since + " to " + a.Window.Until + "; widen it with window=90d"})
		return
	}
	writeJSON(w, http.StatusOK, a)
}

// workloads are the fleet file's workloads, for the filter's choices.
func (s *Server) workloads() []string {
	if s.o.Fleet == nil {
		return nil
	}
	out := make([]string, 0, len(s.o.Fleet.Workloads))
	for _, wl := range s.o.Fleet.Workloads {
		out = append(out, wl.Name)
	}
	return out
}

// costsView is the costs page: the money reports over one window and grouping.
type costsView struct {
	Window, Aggregate string
	Windows           []string
	Aggregates        []string
	Sections          []section
	Titles            map[string]string
}

// idleDims are the dimensions the idle report groups by: GPU samples are kept by location,
// node and GPU.
var idleDims = []string{"location", "provider", "region", "gpu"}

// costTitles head the costs page's sections.
var costTitles = map[string]string{"cost": "Cost", "savings": "Savings against on-demand", "tokens": "Cost per million tokens",
	"idle": "Idle GPU cost", "jobs": "Jobs: deadlines and progress"}

// costsPage is GET /costs?window=&aggregate=: cost, savings, tokens and idle GPUs grouped by
// aggregate, and jobs.
func (s *Server) costsPage(w http.ResponseWriter, r *http.Request) {
	q := pageQuery(r, "7d")
	if q.Get("aggregate") == "" {
		q.Set("aggregate", "workload")
	}
	if _, err := parseQuery("cost", q, s.now()); err != nil {
		s.fail(w, r, badRequest{err})
		return
	}
	names := []string{"cost", "savings", "tokens", "idle", "jobs"}
	out := make([]section, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			nq, note := cloneValues(q), ""
			switch {
			case name == "jobs":
				nq.Del("aggregate") // one row per job
			case name == "idle" && !slices.Contains(idleDims, q.Get("aggregate")):
				nq.Set("aggregate", "location,gpu")
				note = "by location and GPU: GPU samples know where they ran, not the workload, team or market"
			}
			a, err := s.run(r, name, nq)
			out[i] = sectionOf(name, a, err)
			out[i].Note = note
		})
	}
	wg.Wait()
	s.page(w, r, http.StatusOK, "costs", costsView{Window: q.Get("window"), Aggregate: q.Get("aggregate"),
		Windows: windows, Aggregates: aggregates, Sections: out, Titles: costTitles})
}

// loginPage is GET /login.
func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	s.page(w, r, http.StatusOK, "login", loginView{Next: localPath(r.URL.Query().Get("next")), Tokens: s.access.DataDir != ""})
}

// loginView is the login form: where to go after, and why the last try failed.
type loginView struct {
	Next, Error string
	// Tokens is whether this console has a data dir to check tokens against.
	Tokens bool
}

func cloneValues(q url.Values) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = append([]string(nil), v...)
	}
	return out
}
