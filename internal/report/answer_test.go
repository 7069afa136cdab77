package report

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestAnswerRowsAreTheReportsJSON: the rows of an Answer for cost are byte for byte what
// `report cost -o json` prints, so a page and the command line never disagree on a figure.
func TestAnswerRowsAreTheReportsJSON(t *testing.T) {
	st := history(t)
	req := NewRequest("cost", opts("09:30", "11:15", Location, Market))
	res, err := Local{st}.Run(ctxT(t), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) == 0 {
		t.Fatal("no rows to compare")
	}
	var printed bytes.Buffer
	if err := Write(&printed, "json", res, ""); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(NewAnswer(req, res))
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Report, Title, Currency, Basis string
		Window                         map[string]string
		Columns                        []string
		Rows                           json.RawMessage
	}
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	var want, got bytes.Buffer
	_ = json.Compact(&want, printed.Bytes())
	_ = json.Compact(&got, a.Rows)
	if got.String() != want.String() {
		t.Errorf("answer rows\n%s\nreport cost -o json\n%s", got.String(), want.String())
	}
	if a.Report != "cost" || a.Currency != "USD" || a.Basis != "estimated" || a.Title != res.Title {
		t.Errorf("answer %s", b)
	}
	if a.Window["since"] != "2026-11-30T09:30:00Z" || a.Window["until"] != "2026-11-30T11:15:00Z" {
		t.Errorf("window %v", a.Window)
	}
	if len(a.Columns) != len(res.Columns) || a.Columns[0] != "location" {
		t.Errorf("columns %v, want %v", a.Columns, res.Columns)
	}
}

func TestNewAnswerFields(t *testing.T) {
	o := opts("09:00", "12:00")
	tests := []struct {
		name     string
		req      Request
		res      *Result
		wantJSON string
	}{
		{
			name:     "no rows is an empty list, no basis outside cost, tokens, savings and jobs",
			req:      NewRequest("idle", o),
			res:      &Result{Title: "Idle"},
			wantJSON: `{"report":"idle","title":"Idle","window":{"since":"2026-11-30T09:00:00Z","until":"2026-11-30T12:00:00Z"},"currency":"USD","notes":[],"columns":[],"rows":[]}`,
		},
		{
			name:     "billed basis and a total",
			req:      Request{Report: "savings", Since: o.Window.Since, Until: o.Window.Until, Now: o.Now, Basis: BasisBilled},
			res:      &Result{Title: "S", Columns: []string{"usd"}, Rows: nil, Total: map[string]any{"usd": 1.5}, Notes: []string{"n"}},
			wantJSON: `{"report":"savings","title":"S","window":{"since":"2026-11-30T09:00:00Z","until":"2026-11-30T12:00:00Z"},"currency":"USD","basis":"billed","notes":["n"],"columns":["usd"],"rows":[],"total":{"usd":1.5}}`,
		},
		{
			name:     "budget has no window: until is now",
			req:      Request{Report: "budget", Now: o.Now},
			res:      &Result{Title: "B"},
			wantJSON: `{"report":"budget","title":"B","window":{"until":"2026-11-30T12:30:00Z"},"currency":"USD","notes":[],"columns":[],"rows":[]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(NewAnswer(tt.req, tt.res))
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.wantJSON {
				t.Errorf("got\n%s\nwant\n%s", b, tt.wantJSON)
			}
		})
	}
}
