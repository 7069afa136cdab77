package report

import (
	"time"

	"github.com/bursar-dev/bursar/internal/cli"
)

// Currency is the currency of every figure Bursar reports: offers are priced in USD.
const Currency = "USD"

// Answer is a report as the HTTP API returns it: the rows exactly as `report X -o json` prints
// them, with what a reader needs to read them (the window, currency, basis and notes), so a page
// never shows a figure the reports would not.
type Answer struct {
	Report   string       `json:"report"`
	Title    string       `json:"title"`
	Window   AnswerWindow `json:"window"`
	Currency string       `json:"currency"`
	// Basis is estimated or billed for the reports that take one (cost, tokens, savings, jobs), else
	// empty.
	Basis   string    `json:"basis,omitempty"`
	Notes   []string  `json:"notes"`
	Columns []string  `json:"columns"`
	Rows    []cli.Row `json:"rows"`
	// Total is the summary row tables print under the rows, when the report has one.
	Total cli.Row `json:"total,omitempty"`
}

// AnswerWindow is the window an answer covers, in RFC 3339. Budget has no window of its own (each
// policy has its period): its since is empty and its until is the request's now.
type AnswerWindow struct {
	Since string `json:"since,omitempty"`
	Until string `json:"until"`
}

// basisReports are the reports whose figures have a basis (Request.Basis).
var basisReports = []string{"cost", "tokens", "savings", "jobs"}

// NewAnswer is the answer to req whose result is res.
func NewAnswer(req Request, res *Result) Answer {
	a := Answer{
		Report:   req.Report,
		Title:    res.Title,
		Window:   AnswerWindow{Since: rfc3339(req.Since), Until: rfc3339(req.Until)},
		Currency: Currency,
		Notes:    res.Notes,
		Columns:  res.Columns,
		Rows:     res.Rows,
		Total:    res.Total,
	}
	if req.Until.IsZero() {
		a.Window.Until = rfc3339(req.Now)
	}
	for _, r := range basisReports {
		if r == req.Report {
			a.Basis, _ = ParseBasis(req.Basis) // Validate refused any other
		}
	}
	// Empty lists, not null, so a page need not tell "none" from "missing".
	if a.Notes == nil {
		a.Notes = []string{}
	}
	if a.Columns == nil {
		a.Columns = []string{}
	}
	if a.Rows == nil {
		a.Rows = []cli.Row{}
	}
	return a
}

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
