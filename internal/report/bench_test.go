package report

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/store/storetest"
)

// benchRows is how many replica.state and tokens.sample rows BenchmarkReports generates: BURSAR_BENCH_ROWS, default
// one million (the figure, 100 million GPU samples and 10 million prices, is a
// BURSAR_BENCH_ROWS away on a large machine).
func benchRows() int {
	if n, err := strconv.Atoi(os.Getenv("BURSAR_BENCH_ROWS")); err == nil && n > 0 {
		return n
	}
	return 1_000_000
}

// BenchmarkReports times `report cost` and `report tokens` over 30 days, which read the rollups,
// each beside a GROUP BY over the raw rows for the same sums (the report also adds the open
// intervals and per-group splits, which the raw query leaves out, so the raw figure flatters it). Rows are generated inside ClickHouse: 100
// series each sampled evenly over the 30 days, each row closing the interval since the previous one,
// so the rollup's view sees them as the recorder would write them.
func BenchmarkReports(b *testing.B) {
	s := storetest.New(b)
	n := benchRows()
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	step := int64(30*24*3600*1000) * 100 / int64(n) // ms between a series' samples
	ctx := context.Background()
	q := fmt.Sprintf(`INSERT INTO %s (id, at, version, workload, location, provider, market, offer, gpu_model,
		gpus_per_replica, usd_per_hour, desired, ready, prev_at, prev_ready, prev_usd_per_hour)
		SELECT toString(number), fromUnixTimestamp64Milli(toInt64(%d + intDiv(number, 100) * %d), 'UTC') AS t, '1',
			concat('w', toString(number %% 10)), concat('l', toString(intDiv(number, 10) %% 10)), 'aws', 'spot', 'o',
			'H100-80GB', 8, 10, 2, 2, if(number < 100, t, t - toIntervalMillisecond(%d)), if(number < 100, 0, 2), 10
		FROM numbers(%d)`, s.Table("replica_state"), start.UnixMilli(), step, step, n)
	if err := s.Exec(ctx, q); err != nil {
		b.Fatal(err)
	}
	q = fmt.Sprintf(`INSERT INTO %s (id, at, version, location, workload, replica, server, prompt_tokens,
		generation_tokens, requests, reset, delta_prompt_tokens, delta_generation_tokens, delta_requests)
		SELECT toString(number), fromUnixTimestamp64Milli(toInt64(%d + intDiv(number, 100) * %d), 'UTC'), '1',
			concat('l', toString(intDiv(number, 10) %% 10)), concat('w', toString(number %% 10)), 'r', 'vllm',
			intDiv(number, 100) * 100, intDiv(number, 100) * 50, intDiv(number, 100), 0, 100, 50, 1
		FROM numbers(%d)`, s.Table("tokens_sample"), start.UnixMilli(), step, n)
	if err := s.Exec(ctx, q); err != nil {
		b.Fatal(err)
	}
	o := Options{Window: Window{Since: start, Until: start.Add(30 * 24 * time.Hour)}, By: []Dim{Workload}, Now: start.Add(31 * 24 * time.Hour)}
	raw := fmt.Sprintf(`SELECT workload, sum(prev_ready * prev_usd_per_hour * dateDiff('millisecond', greatest(prev_at, %s), least(at, %s))) / 3600000 AS usd
		FROM %s WHERE prev_ready > 0 AND at > %s AND prev_at < %s GROUP BY workload`,
		ms64(o.Window.Since), ms64(o.Window.Until), s.Table("replica_state"), ms64(o.Window.Since), ms64(o.Window.Until))
	rawTokens := fmt.Sprintf(`SELECT workload, location, sum(delta_prompt_tokens) AS prompt, sum(delta_generation_tokens) AS gen
		FROM %s WHERE at >= %s AND at < %s GROUP BY workload, location`,
		s.Table("tokens_sample"), ms64(o.Window.Since), ms64(o.Window.Until))
	tokens := func(ctx context.Context, q Querier, o Options) (*Result, error) {
		return Tokens(ctx, q, TokenOptions{Options: o})
	}
	for _, c := range []struct {
		name   string
		report func(context.Context, Querier, Options) (*Result, error)
		raw    string
	}{{"cost", Cost, raw}, {"tokens", tokens, rawTokens}} {
		b.Run(c.name, func(b *testing.B) {
			var rollup, rawDur time.Duration
			for b.Loop() {
				t0 := time.Now()
				if _, err := c.report(ctx, s, o); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, err := s.Query(ctx, c.raw); err != nil {
					b.Fatal(err)
				}
				rollup, rawDur = rollup+t1.Sub(t0), rawDur+time.Since(t1)
			}
			b.ReportMetric(float64(rollup.Microseconds())/1000/float64(b.N), "report_ms")
			b.ReportMetric(float64(rawDur.Microseconds())/1000/float64(b.N), "raw_groupby_ms")
			b.ReportMetric(float64(n), "rows")
		})
	}
}
