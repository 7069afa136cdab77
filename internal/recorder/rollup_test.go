package recorder

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/store/storetest"
)

func clock(hhmm string) time.Time {
	t, err := time.Parse("2006-01-02 15:04", "2026-11-30 "+hhmm)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func state(hhmm, location, offer string, market events.Market, gpus, ready int, usd float64) events.Event {
	prov, model := "aws", "H100-80GB"
	if strings.HasPrefix(location, "gcp") {
		prov, model = "gcp", "A100-80GB"
	}
	return events.Stamp(&events.ReplicaState{Meta: events.Meta{At: clock(hhmm)}, Workload: "llm", Location: location,
		Provider: prov, Market: market, Offer: offer, GPUModel: model, GPUs: gpus, USDPerHour: usd,
		Desired: ready, Ready: ready})
}

func tokens(hhmm string, prompt, gen, req int64, reset bool) events.Event {
	return events.Stamp(&events.TokensSample{Meta: events.Meta{At: clock(hhmm)}, Location: "aws-use1",
		Workload: "llm", Replica: "r1", Server: "vllm", PromptTokens: prompt, GenerationTokens: gen,
		Requests: req, Reset: reset})
}

// fleetAndTokens is a hand-worked history; TestRollups spells out what it costs.
func fleetAndTokens() []events.Event {
	return []events.Event{
		state("10:30", "aws-use1", "aws/p5/spot", events.Spot, 8, 2, 10),
		state("11:15", "aws-use1", "aws/p5/spot", events.Spot, 8, 3, 10),
		state("12:45", "aws-use1", "aws/p5/spot", events.Spot, 8, 0, 12),
		state("10:00", "gcp-usc1", "gcp/a2/od", events.OnDemand, 4, 1, 3),
		state("10:20", "gcp-usc1", "gcp/a2/od", events.OnDemand, 4, 1, 3),
		state("11:00", "gcp-usc1", "gcp/a2/od", events.OnDemand, 4, 1, 4),
		tokens("10:00", 100, 200, 5, false), // the baseline
		tokens("10:30", 150, 260, 7, false), // +50 +60 +2
		tokens("11:05", 10, 20, 1, true),    // the server restarted: +10 +20 +1
		tokens("11:10", 30, 50, 2, false),   // +20 +30 +1
	}
}

type costRow struct {
	Workload, Location, Provider, Market, GPUModel string `json:",omitempty"`
	Hour                                           string `json:",omitempty"`
	USD                                            float64
	GPUHours                                       float64 `json:"gpu_hours"`
}

func TestRollups(t *testing.T) {
	env, st := bustest.Start(t), storetest.New(t)
	publish(t, env, fleetAndTokens())
	start(t, env, st, Config{})
	settled(t, env, "recorder")

	// aws spot, 2 replicas at $10 from 10:30, 3 from 11:15, none from 12:45; 8 GPUs each.
	// gcp on-demand, 1 replica at $3 from 10:00 (a heartbeat at 10:20), $4 from 11:00; 4 GPUs.
	want := []string{
		"aws-use1 2026-11-30 10:00:00 usd=10 gpu_hours=8",    // 2 x $10 x 0.5h
		"aws-use1 2026-11-30 11:00:00 usd=27.5 gpu_hours=22", // 2 x $10 x 0.25h + 3 x $10 x 0.75h
		"aws-use1 2026-11-30 12:00:00 usd=22.5 gpu_hours=18", // 3 x $10 x 0.75h
		"gcp-usc1 2026-11-30 10:00:00 usd=3 gpu_hours=4",     // 1 x $3 x 1h, in two intervals
	}
	out, err := st.Query(testCtx(t), "SELECT location, toString(hour) AS hour, sum(usd) AS usd, sum(gpu_hours) AS gpu_hours FROM "+
		st.Table("cost_hourly")+" GROUP BY location, hour ORDER BY location, hour")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r struct {
			Location, Hour string
			USD            float64
			GPUHours       float64 `json:"gpu_hours"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %s usd=%g gpu_hours=%g", r.Location, r.Hour, round(r.USD), round(r.GPUHours)))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("cost_hourly:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	tok, err := st.Query(testCtx(t), "SELECT toString(hour) AS hour, sum(prompt_tokens) AS p, sum(generation_tokens) AS g, sum(requests) AS r FROM "+
		st.Table("tokens_hourly")+" GROUP BY hour ORDER BY hour")
	if err != nil {
		t.Fatal(err)
	}
	wantTok := `{"hour":"2026-11-30 10:00:00","p":50,"g":60,"r":2}` + "\n" + `{"hour":"2026-11-30 11:00:00","p":30,"g":50,"r":2}`
	if strings.TrimSpace(string(tok)) != wantTok {
		t.Errorf("tokens_hourly:\n%s\nwant:\n%s", tok, wantTok)
	}
	checkRollupsMatchRaw(t, st)
}

func round(v float64) float64 { return math.Round(v*1e9) / 1e9 }

// checkRollupsMatchRaw compares the rollups with the same totals computed from the raw event
// columns alone, with window functions over each series.
func checkRollupsMatchRaw(t *testing.T, st *store.Store) {
	t.Helper()
	dims := "workload, location, provider, market, gpu_model"
	rollup := fmt.Sprintf("SELECT %s, sum(usd) AS usd, sum(gpu_hours) AS gpu_hours FROM %s GROUP BY %s ORDER BY %s",
		dims, st.Table("cost_hourly"), dims, dims)
	raw := fmt.Sprintf(`SELECT %s,
		sum(pr * pu * (toUnixTimestamp64Milli(at) - toUnixTimestamp64Milli(pt)) / 3600000) AS usd,
		sum(pr * gpus_per_replica * (toUnixTimestamp64Milli(at) - toUnixTimestamp64Milli(pt)) / 3600000) AS gpu_hours
		FROM (SELECT *, lagInFrame(ready) OVER w AS pr, lagInFrame(usd_per_hour) OVER w AS pu,
		             lagInFrame(at) OVER w AS pt, row_number() OVER w AS rn
		      FROM %s FINAL
		      WINDOW w AS (PARTITION BY workload, location, market, offer ORDER BY at
		                   ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW))
		WHERE rn > 1 GROUP BY %s HAVING usd != 0 OR gpu_hours != 0 ORDER BY %s`, dims, st.Table("replica_state"), dims, dims)
	compareFloats(t, st, "cost per hour", rollup, raw)

	rollup = fmt.Sprintf("SELECT workload, location, sum(prompt_tokens) AS p, sum(generation_tokens) AS g, sum(requests) AS r "+
		"FROM %s GROUP BY workload, location ORDER BY workload, location", st.Table("tokens_hourly"))
	delta := func(c string) string {
		return fmt.Sprintf("multiIf(reset, %[1]s, rn = 1, 0, %[1]s < lagInFrame(%[1]s) OVER w, %[1]s, %[1]s - lagInFrame(%[1]s) OVER w)", c)
	}
	raw = fmt.Sprintf(`SELECT workload, location, sum(dp) AS p, sum(dg) AS g, sum(dr) AS r
		FROM (SELECT workload, location, %s AS dp, %s AS dg, %s AS dr
		      FROM (SELECT *, row_number() OVER w AS rn FROM %s FINAL
		            WINDOW w AS (PARTITION BY location, workload, replica ORDER BY at
		                         ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW))
		      WINDOW w AS (PARTITION BY location, workload, replica ORDER BY at
		                   ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW))
		GROUP BY workload, location HAVING p != 0 OR g != 0 OR r != 0 ORDER BY workload, location`,
		delta("prompt_tokens"), delta("generation_tokens"), delta("requests"), st.Table("tokens_sample"))
	compareFloats(t, st, "tokens per hour", rollup, raw)
}

// compareFloats runs two queries and compares their rows, numbers to 1e-9 relative.
func compareFloats(t *testing.T, st *store.Store, what, a, b string) {
	t.Helper()
	rows := func(q string) []map[string]any {
		out, err := st.Query(testCtx(t), q)
		if err != nil {
			t.Fatalf("%s: %v\n%s", what, err, q)
		}
		var rs []map[string]any
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if line == "" {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatal(err)
			}
			rs = append(rs, m)
		}
		return rs
	}
	ra, rb := rows(a), rows(b)
	if len(ra) == 0 || len(ra) != len(rb) {
		t.Fatalf("%s: rollup has %d groups, raw GROUP BY %d (want equal and non-zero)", what, len(ra), len(rb))
	}
	for i := range ra {
		for k, va := range ra[i] {
			vb := rb[i][k]
			fa, aok := va.(float64)
			fb, bok := vb.(float64)
			if aok && bok && math.Abs(fa-fb) <= 1e-9*math.Max(1, math.Abs(fb)) || va == vb {
				continue
			}
			t.Errorf("%s: group %d %s = %v in the rollup, %v from the raw rows", what, i, k, va, vb)
		}
	}
}
