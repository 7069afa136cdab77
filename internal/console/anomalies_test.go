package console

import (
	"context"
	"errors"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/store"
)

const llmCause = "workload=chat|workload=chat,location=aws-use1,gpu_model=H100-80GB,market=on_demand"

// anomalyHistory is the known day with chat's on-demand fallback found as an anomaly at 10:40.
func anomalyHistory(t *testing.T) *store.Store {
	st := history(t)
	insert(t, st, "cost_anomaly", "id, at, version, anomaly, state, series, cause, start, expected_usd_per_hour, "+
		"observed_usd_per_hour, impact_usd, currency, moved",
		[]any{"ca1", at("10:40"), "1", "workload=chat@20261129T1030Z", "open", "workload=chat", llmCause, at("10:30"),
			10.0, 30.0, 3.33, "USD", "['location=aws-use1,gpu_model=H100-80GB,market=on_demand']"},
		[]any{"ca2", at("11:30"), "1", "workload=chat@20261129T1030Z", "closed", "workload=chat", llmCause, at("10:30"),
			10.0, 11.0, 16.5, "USD", "['location=aws-use1,gpu_model=H100-80GB,market=on_demand']"})
	return st
}

func TestAnomaliesPage(t *testing.T) {
	tests := []struct {
		name      string
		answers   func(context.Context) (map[string]string, error)
		want      []string
		wantEmpty string
	}{
		{"with the answers", func(context.Context) (map[string]string, error) {
			return map[string]string{llmCause: "expected (U0DANA, 2026-11-29T10:45:00Z)"}, nil
		}, []string{"expected (U0DANA, 2026-11-29T10:45:00Z)"}, ""},
		{"answers unreachable", func(context.Context) (map[string]string, error) { return nil, errors.New("no NATS") },
			nil, "Answers not shown: no NATS"},
		{"no answers given to the console", nil, nil, "does not reach its bus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, anomalyHistory(t), func(o *Options) { o.AnomalyAnswers = tt.answers })
			status, page := get(t, f.client(), f.ts.URL+"/anomalies?window=yesterday")
			if status != http.StatusOK {
				t.Fatalf("GET /anomalies: %d\n%s", status, page)
			}
			a := f.answer(t, "anomalies", url.Values{"window": {"yesterday"}})
			wantFigures(t, page, a, "series", "state", "expected_usd_per_hour", "observed_usd_per_hour", "impact_usd", "moved")
			text := html.UnescapeString(page)
			for _, w := range append(tt.want, "Anomalies", tt.wantEmpty) {
				if !strings.Contains(text, w) {
					t.Errorf("the page does not say %q", w)
				}
			}
		})
	}
}
