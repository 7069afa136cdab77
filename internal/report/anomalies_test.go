package report

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/store/storetest"
)

const anomalyCols = "id, at, version, anomaly, state, series, cause, start, expected_usd_per_hour, observed_usd_per_hour, impact_usd, currency, moved"

// anomalyEvent is one recorded cost.anomaly row.
func anomalyEvent(id, when, anomaly, state, series, start string, exp, obs, impact float64, moved string) []any {
	return []any{id, at(when), "1", anomaly, state, series, series + "|" + series + ",x", at(start), exp, obs, impact, "USD", moved}
}

func seedAnomalies(t *testing.T, st *store.Store) {
	seed(t, st, "cost_anomaly", anomalyCols,
		// llm's on-demand fallback: opened 10 minutes in, grew, closed.
		anomalyEvent("a1", "10:10", "llm@1000", "open", "workload=llm", "10:00", 35, 95, 10, "['market=on_demand']"),
		anomalyEvent("a2", "10:15", "llm@1000", "update", "workload=llm", "10:00", 35, 140, 25, "['market=on_demand']"),
		anomalyEvent("a2", "10:15", "llm@1000", "update", "workload=llm", "10:00", 35, 140, 25, "['market=on_demand']"), // redelivered
		anomalyEvent("a3", "10:40", "llm@1000", "closed", "workload=llm", "10:00", 35, 36, 60, "['market=on_demand']"),
		// search's team spend, still open at the window's end.
		anomalyEvent("b1", "11:05", "search@1055", "open", "team=search", "10:55", 100, 180, 13, "['workload=llm,location=a','workload=emb,location=a']"),
		// closed before the window.
		anomalyEvent("c1", "06:10", "old@0600", "open", "workload=old", "06:00", 5, 20, 1, "[]"),
		anomalyEvent("c2", "06:30", "old@0600", "closed", "workload=old", "06:00", 5, 5, 4, "[]"),
		// started after the window.
		anomalyEvent("d1", "13:05", "late@1300", "open", "workload=late", "13:00", 5, 20, 1, "[]"))
}

func TestAnomaliesReport(t *testing.T) {
	st := storetest.New(t)
	seedAnomalies(t, st)
	o := Options{Window: Window{Since: at("09:00"), Until: at("12:00")}, Now: at("12:00")}
	res, err := Anomalies(context.Background(), st, o)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"workload=llm closed detect_min=10 expected_usd_per_hour=35 observed_usd_per_hour=140 impact_usd=60 end=2026-11-30 10:40:00 +0000 UTC moved=market=on_demand",
		"team=search open detect_min=10 expected_usd_per_hour=100 observed_usd_per_hour=180 impact_usd=13 end=<nil> moved=workload=llm,location=a workload=emb,location=a",
	}
	var gotRows []string
	for _, r := range res.Rows {
		var b strings.Builder
		b.WriteString(r["series"].(string) + " " + r["state"].(string))
		for _, c := range []string{"detect_min", "expected_usd_per_hour", "observed_usd_per_hour", "impact_usd", "end", "moved"} {
			b.WriteString(" " + c + "=" + fmt.Sprint(r[c]))
		}
		gotRows = append(gotRows, b.String())
	}
	if strings.Join(gotRows, "\n") != strings.Join(want, "\n") {
		t.Fatalf("rows:\n%s\nwant:\n%s", strings.Join(gotRows, "\n"), strings.Join(want, "\n"))
	}
	if det, ok := res.Rows[0]["detected"].(time.Time); !ok || !det.Equal(at("10:10")) {
		t.Errorf("detected %v, want 10:10", res.Rows[0]["detected"])
	}
	if res.Total["impact_usd"] != 73.0 || !strings.Contains(res.Total["series"].(string), "2 anomalies, 1 open") {
		t.Errorf("total %v", res.Total)
	}

	FillAnswers(res.Rows, map[string]string{"workload=llm|workload=llm,x": "expected (U0DANA)"})
	if res.Rows[0]["answer"] != "expected (U0DANA)" || res.Rows[1]["answer"] != "" {
		t.Errorf("answers %q, %q", res.Rows[0]["answer"], res.Rows[1]["answer"])
	}
}

func TestAnomaliesReportRefusesGrouping(t *testing.T) {
	st := storetest.New(t)
	_, err := Anomalies(context.Background(), st, Options{Window: Window{Since: at("09:00"), Until: at("12:00")}, By: []Dim{Workload}})
	if err == nil || !strings.Contains(err.Error(), "--by") {
		t.Fatalf("err %v, want one naming --by", err)
	}
}

// The dashboard's anomalies panel shows, for the anomalies updated in its range, the state,
// impact and peak that report anomalies gives them; a redelivered row counts once.
func TestDashboardAnomaliesMatchReport(t *testing.T) {
	st := storetest.New(t)
	seedAnomalies(t, st)
	rows, err := queryRows[struct {
		Series string  `json:"series"`
		State  string  `json:"state"`
		Peak   float64 `json:"peak_usd_per_hour"`
		Impact float64 `json:"impact_usd"`
	}](context.Background(), st, expand(panelSQL(t, "Cost anomalies"), st.Database(), at("09:00").Unix(), at("12:00").Unix()))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%s %s peak=%g impact=%g", r.Series, r.State, r.Peak, r.Impact))
	}
	want := []string{"workload=llm closed peak=140 impact=60", "team=search open peak=180 impact=13"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("panel rows:\n%s\nwant (as report anomalies):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
