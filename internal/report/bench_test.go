package report

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/store/storetest"
)

// benchEstate is the fleet whose history BenchmarkReports generates, sized so that 30 days of it
// at the collectors' default cadences give the volume:
//
//   - 580 GPUs (145 replicas of 4 H100s), each sampled every 15 s (the gpu collector's default):
//     580 × 172,800 = 100,224,000 gpu.sample rows in 30 days;
//   - the replicas run round-robin over 72 series (12 workloads × 6 locations, one market and offer
//     each, so 2 or 3 ready replicas a series), and the arbiter publishes each series'
//     replica.state every 15 s (its ReportEvery default): 12,441,600 replica.state rows;
//   - each replica's token counters are scraped every 30 s (the token scraper's default):
//     12,528,000 tokens.sample rows;
//   - 2,315 offers polled every 10 minutes (the price collector's default schedule), each price
//     moving at every poll: 10,000,800 price.observed rows.
//
// Spot prices move every hour; on-demand and reserved prices stay put.
type benchEstate struct {
	days      int       // of history, ending at start + days
	start     time.Time // of the history, on an hour
	workloads int
	locations []string // with providers[i]
	providers []string
	series    int // workloads × locations
	replicas  int
	gpusEach  int // GPUs per replica
	offers    int // price.observed offers
}

const (
	gpuEveryMS     = 15_000
	replicaEveryMS = 15_000
	tokensEveryMS  = 30_000
	priceEveryMS   = 600_000
)

func newBenchEstate(days int, start time.Time) benchEstate {
	e := benchEstate{days: days, start: start, workloads: 12,
		locations: []string{"aws-use1", "aws-usw2", "gcp-usc1", "azure-eus", "coreweave-ord", "lambda-tx"},
		providers: []string{"aws", "aws", "gcp", "azure", "coreweave", "lambda"},
		replicas:  145, gpusEach: 4, offers: 2315}
	e.series = e.workloads * len(e.locations)
	return e
}

func (e benchEstate) samples(everyMS int64) int64 { return int64(e.days) * 24 * 3600 * 1000 / everyMS }
func (e benchEstate) gpuRows() int64              { return e.samples(gpuEveryMS) * int64(e.replicas*e.gpusEach) }
func (e benchEstate) replicaRows() int64          { return e.samples(replicaEveryMS) * int64(e.series) }
func (e benchEstate) tokenRows() int64            { return e.samples(tokensEveryMS) * int64(e.replicas) }
func (e benchEstate) priceRows() int64            { return e.samples(priceEveryMS) * int64(e.offers) }

// seriesCols are SQL expressions over a series number s: its labels, ready replicas and base price.
func (e benchEstate) seriesCols() string {
	arr := func(xs []string) string { return "['" + strings.Join(xs, "', '") + "']" }
	return fmt.Sprintf(`concat('w', leftPad(toString(s %% %[1]d), 2, '0')) AS workload,
		%[2]s[intDiv(s, %[1]d) + 1] AS location, %[3]s[intDiv(s, %[1]d) + 1] AS provider,
		['spot', 'spot', 'on_demand', 'reserved'][s %% 4 + 1] AS market,
		concat(location, '-', market, '-h100x4') AS offer,
		toInt64(%[4]d + (s < %[5]d)) AS ready,
		[9.6, 9.6, 24.4, 15.2][s %% 4 + 1] AS base`,
		e.workloads, arr(e.locations), arr(e.providers), e.replicas/e.series, e.replicas%e.series)
}

// generate writes the estate's history inside ClickHouse, each table with INSERT ... SELECT FROM
// numbers(), in time order, with the columns the recorder fills (prev_* on replica.state, delta_*
// on tokens.sample), so the rollups' materialized views see the rows as they would arrive.
func (e benchEstate) generate(ctx context.Context, b *testing.B, s *store.Store) {
	for _, st := range e.inserts(s) {
		t0 := time.Now()
		if err := s.Exec(ctx, st.sql+" SETTINGS max_insert_threads = 2"); err != nil {
			b.Fatalf("generating %s: %v", st.table, err)
		}
		b.Logf("generated %s in %s", st.table, time.Since(t0).Round(time.Millisecond))
	}
}

// benchInsert is one table's INSERT ... SELECT.
type benchInsert struct{ table, sql string }

func (e benchEstate) inserts(s *store.Store) []benchInsert {
	d0 := e.start.UnixMilli()
	spot := "if(market = 'spot', 1 + ((intDiv(%s, 240) + s) %% 11) / 20, 1) * base" // moves hourly
	return []benchInsert{
		{"replica_state", fmt.Sprintf(`INSERT INTO %s (id, at, version, workload, location, provider, market, offer,
			gpu_model, gpus_per_replica, usd_per_hour, desired, ready, prev_at, prev_ready, prev_usd_per_hour)
			SELECT lower(hex(sipHash128('replica.state', number))), fromUnixTimestamp64Milli(toInt64(%d + k * %d + s * 193), 'UTC') AS t,
				'1', workload, location, provider, market, offer, 'H100-80GB', %d, %s, ready, ready,
				if(k = 0, t, t - toIntervalMillisecond(%d)), if(k = 0, 0, ready), if(k = 0, 0, %s)
			FROM (SELECT number, intDiv(number, %d) AS k, number %% %d AS s, %s FROM numbers(%d))`,
			s.Table("replica_state"), d0, replicaEveryMS, e.gpusEach, fmt.Sprintf(spot, "k"), replicaEveryMS,
			fmt.Sprintf(spot, "(k - 1)"), e.series, e.series, e.seriesCols(), e.replicaRows())},
		{"tokens_sample", fmt.Sprintf(`INSERT INTO %s (id, at, version, location, workload, replica, server,
			prompt_tokens, generation_tokens, requests, reset, delta_prompt_tokens, delta_generation_tokens, delta_requests)
			SELECT lower(hex(sipHash128('tokens.sample', number))), fromUnixTimestamp64Milli(toInt64(%d + 5000 + k * %d + r * 61), 'UTC'),
				'1', location, workload, concat(workload, '-', location, '-', toString(intDiv(r, %d))), 'vllm',
				(6000 * k + 2000 * intDiv(k + 1, 2)) * m, 1500 * k + 500 * intDiv(k, 3), 12 * k + intDiv(k + 1, 2), false,
				if(k = 0, 0, (6000 + 2000 * (k %% 2)) * m), if(k = 0, 0, 1500 + 500 * (k %% 3 = 0)), if(k = 0, 0, 12 + k %% 2)
			FROM (SELECT number, intDiv(number, %d) AS k, number %% %d AS r, r %% %d AS s, 1 + s %% 5 AS m, %s FROM numbers(%d))`,
			s.Table("tokens_sample"), d0, tokensEveryMS, e.series, e.replicas, e.replicas, e.series, e.seriesCols(), e.tokenRows())},
		{"gpu_sample", fmt.Sprintf(`INSERT INTO %s (id, at, version, location, node, uuid, %s, model,
			utilization_pct, memory_used_bytes, memory_total_bytes, power_w, temperature_c)
			SELECT lower(hex(sipHash128('gpu.sample', number))), fromUnixTimestamp64Milli(toInt64(%d + k * %d + g * 17), 'UTC'),
				'1', location, concat(location, '-node-', toString(r)), concat('GPU-', lower(hex(sipHash64(g)))), g %% %d, 'H100-80GB',
				u, toInt64(85899345920 * u / 100), 85899345920, 90 + 6 * u, 30 + u / 3
			FROM (SELECT number, intDiv(number, %d) AS k, number %% %d AS g, intDiv(g, %d) AS r, r %% %d AS s,
				toFloat64((k * 13 + g * 7) %% 101) AS u, %s FROM numbers(%d))`,
			s.Table("gpu_sample"), "`index`", d0, gpuEveryMS, e.gpusEach, e.replicas*e.gpusEach, e.replicas*e.gpusEach, e.gpusEach,
			e.series, e.seriesCols(), e.gpuRows())},
		{"price_observed", fmt.Sprintf(`INSERT INTO %s (id, at, version, provider, region, zone, instance_type,
			gpu_model, gpu_count, gpu_memory_gb, market, usd_per_hour, source)
			SELECT lower(hex(sipHash128('price.observed', number))), fromUnixTimestamp64Milli(toInt64(%d + k * %d + o * 200), 'UTC'),
				'1', ['aws', 'gcp', 'azure', 'coreweave', 'lambda', 'runpod'][o %% 6 + 1], concat('region-', toString(intDiv(o, 6) %% 20)),
				concat('region-', toString(intDiv(o, 6) %% 20), ['a', 'b', 'c'][o %% 3 + 1]), concat('type-', toString(intDiv(o, 120))),
				['H100-80GB', 'A100-80GB', 'L40S-48GB', 'H200-141GB', 'A10G-24GB'][o %% 5 + 1], [1, 2, 4, 8][intDiv(o, 5) %% 4 + 1], 80,
				['spot', 'on_demand', 'reserved'][intDiv(o, 7) %% 3 + 1], (1 + (o %% 97) / 10) * (1 + ((k + o) %% 17) / 100), 'bench'
			FROM (SELECT number, intDiv(number, %d) AS k, number %% %d AS o FROM numbers(%d))`,
			s.Table("price_observed"), d0, priceEveryMS, e.offers, e.offers, e.priceRows())},
	}
}

// benchDays is how many days of history BenchmarkReports generates: BURSAR_BENCH_DAYS, default
// 30, the volume. Fewer days make a quick run (the reports still cover 30 days).
func benchDays(b *testing.B) int {
	v := os.Getenv("BURSAR_BENCH_DAYS")
	if v == "" {
		return 30
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 30 {
		b.Fatalf("BURSAR_BENCH_DAYS=%q: want a whole number of days from 1 to 30", v)
	}
	return n
}

// BenchmarkReports times `report cost` and `report tokens` by workload over 30 days of the
// benchEstate's history, each beside one GROUP BY over the raw rows that computes the same
// answer (closed intervals clipped to the window plus each series' open interval for cost; token
// deltas in the window and that cost for tokens), and fails when the two answers differ.
//
// The history ends a day after the wall clock's hour, so the raw telemetry's 30-day TTL drops
// nothing while the benchmark runs; the window is not on the hour (a report run at 10:00:07.25
// over the last 30 days), so the reports also read the edges of the window and the intervals still
// open at its end.
func BenchmarkReports(b *testing.B) {
	s := storetest.New(b)
	ctx := context.Background()
	e := newBenchEstate(benchDays(b), time.Now().UTC().Truncate(time.Hour).Add(-29*24*time.Hour))
	t0 := time.Now()
	e.generate(ctx, b, s)
	gen := time.Since(t0)
	b.Logf("generated %d gpu.sample, %d price.observed, %d replica.state and %d tokens.sample rows in %s",
		e.gpuRows(), e.priceRows(), e.replicaRows(), e.tokenRows(), gen.Round(time.Second))
	settle(ctx, b, s)
	until := e.start.Add(time.Duration(e.days)*24*time.Hour + 7250*time.Millisecond)
	o := Options{Window: Window{Since: until.Add(-30 * 24 * time.Hour), Until: until}, By: []Dim{Workload}, Now: until}
	rawCost, rawTokens := rawCostSQL(s, o), rawTokensSQL(s, o)
	tokens := func(ctx context.Context, q Querier, o Options) (*Result, error) {
		return Tokens(ctx, q, TokenOptions{Options: o})
	}
	for _, c := range []struct {
		name   string
		report func(context.Context, Querier, Options) (*Result, error)
		raw    string
		cols   map[string]float64 // compared columns and how far apart they may be
	}{
		{"cost", Cost, rawCost, map[string]float64{"usd": 0.01, "gpu_hours": 0.001, "spot_share": 1e-4}},
		{"tokens", tokens, rawTokens, map[string]float64{"prompt_tokens": 0, "generation_tokens": 0, "requests": 0, "usd": 0.01}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var rep, raw time.Duration
			for b.Loop() {
				t0 := time.Now()
				res, err := c.report(ctx, s, o)
				if err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				out, err := s.Query(ctx, c.raw)
				if err != nil {
					b.Fatal(err)
				}
				rep, raw = rep+t1.Sub(t0), raw+time.Since(t1)
				sameAnswer(b, res.Rows, out, c.cols)
			}
			b.ReportMetric(float64(rep.Microseconds())/1000/float64(b.N), "report_ms")
			b.ReportMetric(float64(raw.Microseconds())/1000/float64(b.N), "raw_groupby_ms")
			b.ReportMetric(float64(e.gpuRows()), "gpu_rows")
			b.ReportMetric(float64(e.priceRows()), "price_rows")
			b.ReportMetric(gen.Seconds(), "generate_s")
		})
	}
}

// settle waits until the engine's background merges of the generated parts are done (two
// polls a second apart with none running), so the timings below are of a history at rest, as 30
// days of small recorder batches would be, and not shared with merging 100 million fresh rows.
func settle(ctx context.Context, b *testing.B, s *store.Store) {
	t0 := time.Now()
	merges := fmt.Sprintf(`SELECT count() AS n FROM system.merges WHERE database = '%s'`, s.Database())
	for quiet := 0; quiet < 2; {
		var n struct{ N int }
		out, err := s.Query(ctx, merges)
		if err == nil {
			err = json.Unmarshal(out, &n)
		}
		if err != nil {
			b.Fatalf("reading system.merges: %v", err)
		}
		if quiet++; n.N > 0 {
			quiet = 0
		}
		time.Sleep(time.Second)
	}
	out, err := s.Query(ctx, fmt.Sprintf(`SELECT table, count() AS parts, sum(rows) AS rows FROM system.parts
		WHERE database = '%s' AND active GROUP BY table ORDER BY table`, s.Database()))
	if err != nil {
		b.Fatalf("reading system.parts: %v", err)
	}
	b.Logf("merges settled in %s; active parts:\n%s", time.Since(t0).Round(time.Second), out)
}

// rawCostSQL is `report cost --by workload` as one GROUP BY over replica_state: every closed
// interval clipped to the window, plus each series' interval open since its latest sample.
func rawCostSQL(s *store.Store, o Options) string {
	since, until := o.Window.Since.UnixMilli(), o.Window.Until.UnixMilli()
	// An open interval ends when the fleet was last heard from (lastHeard), never past Now.
	end := fmt.Sprintf("least(%[1]d, ifNull((SELECT toUnixTimestamp64Milli(max(at)) FROM %[2]s), %[1]d))",
		min(o.Now.UnixMilli(), until), s.Table("replica_state"))
	return fmt.Sprintf(`SELECT workload, sum(u) AS usd, sum(g) AS gpu_hours,
		if(usd = 0, 0, sumIf(u, market = 'spot') / usd) AS spot_share
		FROM (
			SELECT workload, market, prev_ready * prev_usd_per_hour * ms / 3600000 AS u,
				prev_ready * gpus_per_replica * ms / 3600000 AS g
			FROM (SELECT workload, market, prev_ready, prev_usd_per_hour, gpus_per_replica,
					least(toUnixTimestamp64Milli(at), %[2]d) - greatest(toUnixTimestamp64Milli(prev_at), %[1]d) AS ms
				FROM %[4]s WHERE prev_ready > 0 AND at > prev_at AND toUnixTimestamp64Milli(at) > %[1]d
					AND toUnixTimestamp64Milli(prev_at) < %[2]d)
			UNION ALL
			SELECT workload, market, ready * usd_per_hour * ms / 3600000, ready * gpus * ms / 3600000
			FROM (SELECT workload, location, market, offer, argMax(ready, at) AS ready,
					argMax(usd_per_hour, at) AS usd_per_hour, argMax(gpus_per_replica, at) AS gpus,
					toUnixTimestamp64Milli(max(at)) AS last_ms, %[3]s - greatest(last_ms, %[1]d) AS ms
				FROM %[4]s GROUP BY workload, location, market, offer HAVING ready > 0 AND last_ms < %[3]s)
		) GROUP BY workload ORDER BY workload`, since, until, end, s.Table("replica_state"))
}

// rawTokensSQL is `report tokens --by workload` as GROUP BYs over raw rows: the token counters'
// increases in the window beside the raw cost.
func rawTokensSQL(s *store.Store, o Options) string {
	return fmt.Sprintf(`SELECT workload, prompt_tokens, generation_tokens, requests, c.usd AS usd
		FROM (SELECT workload, sum(delta_prompt_tokens) AS prompt_tokens, sum(delta_generation_tokens) AS generation_tokens,
				sum(delta_requests) AS requests
			FROM %s WHERE at >= %s AND at < %s GROUP BY workload) AS t
		FULL OUTER JOIN (%s) AS c USING (workload) ORDER BY workload`,
		s.Table("tokens_sample"), ms64(o.Window.Since), ms64(o.Window.Until), rawCostSQL(s, o))
}

// sameAnswer fails unless the report's rows and the raw query's rows hold the same workloads with
// the same values in cols, each within its tolerance (the report rounds to the cent).
func sameAnswer(b *testing.B, rows []cli.Row, raw []byte, cols map[string]float64) {
	b.Helper()
	got := map[string]cli.Row{}
	for _, r := range rows {
		got[fmt.Sprint(r["workload"])] = r
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) != len(rows) || len(rows) == 0 {
		b.Fatalf("the report has %d workloads, the raw GROUP BY %d", len(rows), len(lines))
	}
	for _, l := range lines {
		var want map[string]any
		if err := json.Unmarshal([]byte(l), &want); err != nil {
			b.Fatalf("decoding %q: %v", l, err)
		}
		w := fmt.Sprint(want["workload"])
		for col, tol := range cols {
			g, ok1 := toFloat(got[w][col])
			x, ok2 := toFloat(want[col])
			if !ok1 || !ok2 || math.Abs(g-x) > tol+1e-9*math.Abs(x) {
				b.Fatalf("workload %s: the report's %s is %v, the raw GROUP BY's %v", w, col, got[w][col], want[col])
			}
		}
	}
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	}
	return 0, false
}
