package console

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/report"
)

func TestParseQuery(t *testing.T) {
	tests := []struct {
		name, report, query  string
		wantSince, wantUntil time.Time
		wantBy               []report.Dim
		wantFilter           report.Filter
		wantPlan             string
	}{
		{name: "default week", report: "cost", query: "", wantSince: now.Add(-7 * 24 * time.Hour), wantUntil: now},
		{name: "yesterday", report: "tokens", query: "window=yesterday", wantSince: day.AddDate(0, 0, 0), wantUntil: day.AddDate(0, 0, 1)},
		{name: "since until", report: "cost", query: "since=2026-11-01&until=2026-11-02T12:00:00Z",
			wantSince: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), wantUntil: time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)},
		{name: "aggregate and filter", report: "cost", query: "window=24h&aggregate=workload,+gpu&filter=provider:aws,provider:gcp&filter=market:spot",
			wantSince: now.Add(-24 * time.Hour), wantUntil: now, wantBy: []report.Dim{"workload", "gpu"},
			wantFilter: report.Filter{"provider": {"aws", "gcp"}, "market": {"spot"}}},
		{name: "one plan", report: "decisions", query: "window=30d&plan=p-1", wantSince: now.Add(-30 * 24 * time.Hour), wantUntil: now, wantPlan: "p-1"},
		{name: "budget has no window", report: "budget", query: "window=7d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, _ := url.ParseQuery(tt.query)
			got, err := parseQuery(tt.report, q, now)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Since.Equal(tt.wantSince) || !got.Until.Equal(tt.wantUntil) || !slices.Equal(got.By, tt.wantBy) ||
				got.Plan != tt.wantPlan || !equalFilters(got.Filter, tt.wantFilter) || got.Report != tt.report || !got.Now.Equal(now) {
				t.Errorf("parseQuery(%q) = %+v", tt.query, got)
			}
		})
	}
}

func equalFilters(a, b report.Filter) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

func TestParseQueryRefusesMalformed(t *testing.T) {
	tests := []struct{ name, report, query, wantErr string }{
		{"unknown parameter", "cost", "windows=7d", "unknown parameter windows="},
		{"window twice", "cost", "window=7d&window=1d", "window= given 2 times"},
		{"bad window", "cost", "window=7x", "window="},
		{"negative window", "cost", "window=-1d", "window="},
		{"window and since", "cost", "window=7d&since=2026-11-01", "window=7d and since="},
		{"bad since", "cost", "since=yesterday-ish", "since="},
		{"bad until", "cost", "window=7d&until=soon", "until="},
		{"empty window", "cost", "since=2026-11-02&until=2026-11-01", "empty"},
		{"unknown dimension", "cost", "aggregate=workload,colour", `aggregate=workload,colour: unknown dimension "colour"`},
		{"dimension twice", "cost", "aggregate=gpu,gpu", "gpu given twice"},
		{"filter without value", "cost", "filter=provider:", "filter=provider:: want dimension:value"},
		{"filter without colon", "cost", "filter=aws", "filter=aws: want dimension:value"},
		{"filter unknown dimension", "cost", "filter=colour:red", `unknown dimension "colour"`},
		{"aggregate on decisions", "decisions", "aggregate=workload", "aggregate=: decisions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, _ := url.ParseQuery(tt.query)
			_, err := parseQuery(tt.report, q, now)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseQuery(%q) err = %v, want it to contain %q", tt.query, err, tt.wantErr)
			}
		})
	}
}

// FuzzParseQuery: whatever the query string, parsing either refuses it or gives a request whose
// window is not empty, and what Validate then says is an error, not a panic.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"window=7d", "window=yesterday&aggregate=workload,gpu", "since=2026-11-01&until=2026-11-02",
		"filter=provider:aws,market:spot&filter=gpu:H100", "window=%00", "aggregate=,,,", "plan=p-1&window=30d", "basis=billed"} {
		f.Add("cost", s)
	}
	f.Add("decisions", "plan=../../etc")
	f.Fuzz(func(t *testing.T, name, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		req, err := parseQuery(name, q, now)
		if err != nil {
			return
		}
		if name != "budget" && !req.Until.After(req.Since) {
			t.Fatalf("parseQuery(%q) gave an empty window %s to %s", raw, req.Since, req.Until)
		}
		_ = req.Validate()
	})
}
