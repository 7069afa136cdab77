package report

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// grafanaPanel is the part of a dashboard panel holding its queries.
type grafanaPanel struct {
	Title   string `json:"title"`
	Targets []struct {
		RawSQL     string `json:"rawSql"`
		Datasource struct {
			Type string `json:"type"`
		} `json:"datasource"`
	} `json:"targets"`
}

type grafanaDashboard struct {
	Inputs []struct {
		Name     string `json:"name"`
		PluginID string `json:"pluginId"`
	} `json:"__inputs"`
	Panels     []grafanaPanel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

var (
	timeFilter   = regexp.MustCompile(`\$__timeFilter\(([^)]+)\)`)
	timeInterval = regexp.MustCompile(`\$__timeInterval\(([^)]+)\)`)
)

// expand does what the grafana-clickhouse-datasource plugin and Grafana do to a panel's SQL
// before sending it: macros for the time range and step, and the dashboard's variables.
func expand(sql, db string, from, to int64) string {
	sql = timeFilter.ReplaceAllString(sql, fmt.Sprintf("$1 >= toDateTime(%d) AND $1 <= toDateTime(%d)", from, to))
	sql = timeInterval.ReplaceAllString(sql, "toStartOfInterval(toDateTime($1), INTERVAL 3600 second)")
	return strings.NewReplacer("$__interval_s", "3600", "${database}", db, "$database", db,
		"${workload:singlequote}", "'chat'", "${location:singlequote}", "'aws-use1', 'gcp-usc1'").Replace(sql)
}

func dashboardFiles(t *testing.T) []string {
	_, here, _, _ := runtime.Caller(0)
	files, err := filepath.Glob(filepath.Join(filepath.Dir(here), "..", "..", "dashboards", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards found: %v", err)
	}
	return files
}

func TestDashboardQueriesRun(t *testing.T) {
	st := history(t)
	from, to := at("09:00").Unix(), at("12:00").Unix()
	for _, file := range dashboardFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var d grafanaDashboard
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(d.Inputs) != 1 || d.Inputs[0].PluginID != "grafana-clickhouse-datasource" {
			t.Errorf("%s: want one datasource input for grafana-clickhouse-datasource, got %+v", file, d.Inputs)
		}
		var queries []struct{ name, sql string }
		for _, v := range d.Templating.List {
			if s, ok := v.Query.(string); ok && v.Type == "query" {
				queries = append(queries, struct{ name, sql string }{"variable " + v.Name, s})
			}
		}
		for _, p := range d.Panels {
			if len(p.Targets) == 0 {
				t.Errorf("%s: panel %q has no query", file, p.Title)
			}
			for _, tg := range p.Targets {
				if tg.Datasource.Type != "grafana-clickhouse-datasource" {
					t.Errorf("%s: panel %q uses datasource %q", file, p.Title, tg.Datasource.Type)
				}
				queries = append(queries, struct{ name, sql string }{p.Title, tg.RawSQL})
			}
		}
		for _, q := range queries {
			t.Run(filepath.Base(file)+"/"+q.name, func(t *testing.T) {
				sql := expand(q.sql, st.Database(), from, to)
				if strings.Contains(sql, "$") {
					t.Fatalf("unexpanded macro or variable left:\n%s", sql)
				}
				if _, err := st.Query(ctxT(t), sql); err != nil {
					t.Errorf("%v\n%s", err, sql)
				}
			})
		}
	}
}

// The spend panel reads the same rollup as report cost: over whole hours they agree.
func TestDashboardSpendMatchesReport(t *testing.T) {
	st := history(t)
	b, err := os.ReadFile(dashboardFiles(t)[0])
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	var sql string
	for _, p := range d.Panels {
		if p.Title == "Spend, GPU-hours and cost per GPU-hour" {
			sql = p.Targets[0].RawSQL
		}
	}
	if sql == "" {
		t.Fatal("no spend table panel in " + dashboardFiles(t)[0])
	}
	rows, err := queryRows[struct {
		Location string  `json:"location"`
		USD      float64 `json:"usd"`
	}](ctxT(t), st, expand(sql, st.Database(), at("09:00").Unix(), at("10:59").Unix()))
	if err != nil {
		t.Fatal(err)
	}
	// 09:00 and 10:00, closed intervals only: aws 2 x $4 x 1.5h + 2 x $5 x 0.5h; gcp 2h x $3.
	got := map[string]float64{}
	for _, r := range rows {
		got[r.Location] = r.USD
	}
	if got["aws-use1"] != 17 || got["gcp-usc1"] != 6 {
		t.Errorf("dashboard spend = %v, want aws-use1 17, gcp-usc1 6", got)
	}
}

// The panel of cost per million tokens by GPU type and market splits tokens as report tokens does
// without per-type rates: over a whole hour they agree.
func TestDashboardTokensByTypeMatchesReport(t *testing.T) {
	st := twoTypes(t)
	sql := panelSQL(t, "Cost per million tokens by GPU type and market")
	rows, err := queryRows[struct {
		Series string  `json:"series"`
		USD    float64 `json:"usd_per_m_tokens"`
	}](ctxT(t), st, expand(sql, st.Database(), at("10:00").Unix(), at("11:00").Unix()))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range rows {
		got[r.Series] = r.USD
	}
	res, err := Tokens(ctxT(t), st, TokenOptions{Options: opts("10:00", "11:00", GPU, Market)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{}
	for _, r := range res.Rows {
		want[r["gpu"].(string)+" "+r["market"].(string)] = r["usd_per_m_tokens"].(float64)
	}
	if len(want) != 2 || len(got) != len(want) {
		t.Fatalf("dashboard %v, report %v: want the same two series", got, want)
	}
	for k, w := range want {
		if math.Abs(got[k]-w) > 1e-3 {
			t.Errorf("%s: dashboard %.4f $/M tokens, report %.4f", k, got[k], w)
		}
	}
}
