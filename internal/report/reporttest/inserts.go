package reporttest

import (
	"fmt"

	"github.com/bursar-dev/bursar/internal/store"
)

// insert is one table's INSERT ... SELECT.
type insert struct{ table, sql string }

// Cadences of the raw rows the estate writes.
const (
	hourMS   = 3_600_000
	dayMS    = 24 * hourMS
	sampleMS = 600_000 // gpu.sample and price.observed: every 10 minutes
	tokensH  = 2       // the last hours whose tokens are counters (tokens.sample), not the rollup
)

// inserts are the estate's tables in the order written. Every series reports its replica.state
// at one instant, as the arbiter reports a group's offers together (fleetstate.go). Rows the recorder would write as events
// (replica.state, tokens.sample) go through the rollups' materialized views, as they would
// arrive; the rollups' older hours are written to the rollups directly.
func (e Estate) inserts(st *store.Store) []insert {
	n, hours := int64(e.Series), int64(e.Days)*24
	endMS := e.End.UnixMilli()
	d0 := endMS - int64(e.Days)*dayMS
	keys := int64(e.Workloads()) * 10 // workload × location, as tokens are counted
	cols := seriesCols()
	// A key k is series s = k/10*40 + k%10: its workload and location.
	keyCols := fmt.Sprintf("intDiv(k, 10) * %d + k %% 10 AS s, 200 + (k %% 50) * 20 AS rate, %s", seriesPer, cols)
	return []insert{
		{"cost_hourly", fmt.Sprintf(`INSERT INTO %s (workload, location, provider, market, gpu_model, hour, usd, gpu_hours, replica_hours)
			SELECT workload, location, provider, market, gpu, toDateTime(%d + h * 3600, 'UTC'), ready * %s, ready * 8, ready
			FROM (SELECT intDiv(number, %d) AS h, number %% %d AS s, %s FROM numbers(%d))`,
			st.Table("cost_hourly"), d0/1000, price("h"), n, n, cols, n*hours)},
		{"replica_state", fmt.Sprintf(`INSERT INTO %s (id, at, version, workload, location, provider, market, offer, gpu_model,
			gpus_per_replica, usd_per_hour, desired, ready, prev_at, prev_ready, prev_usd_per_hour)
			SELECT lower(hex(sipHash128('estate.replica', s))), fromUnixTimestamp64Milli(toInt64(%d - 30000), 'UTC') AS t,
				'1', workload, location, provider, market, offer, gpu, 8, %s, ready + (s %% 7 = 0), ready, t, 0, 0
			FROM (SELECT number AS s, %s FROM numbers(%d))`,
			st.Table("replica_state"), endMS, price(fmt.Sprint(hours-1)), cols, n)},
		{"tokens_hourly", fmt.Sprintf(`INSERT INTO %s (workload, location, hour, prompt_tokens, generation_tokens, requests)
			SELECT workload, location, toDateTime(%d + h * 3600, 'UTC'), toInt64(rate * 3600), toInt64(rate * 900), toInt64(rate * 3.6)
			FROM (SELECT intDiv(number, %d) AS h, number %% %d AS k, %s FROM numbers(%d))`,
			st.Table("tokens_hourly"), d0/1000, keys, keys, keyCols, keys*(hours-tokensH))},
		{"tokens_sample", fmt.Sprintf(`INSERT INTO %s (id, at, version, location, workload, replica, server, prompt_tokens,
			generation_tokens, requests, reset, delta_prompt_tokens, delta_generation_tokens, delta_requests)
			SELECT lower(hex(sipHash128('estate.tokens', number))), fromUnixTimestamp64Milli(toInt64(%d + j * 60000 + 30000), 'UTC'),
				'1', location, workload, concat(workload, '-', location), 'vllm', toInt64(rate * 60 * (j + 1)),
				toInt64(rate * 15 * (j + 1)), toInt64(rate * 0.06 * (j + 1)), false, toInt64(rate * 60), toInt64(rate * 15), toInt64(rate * 0.06)
			FROM (SELECT number, intDiv(number, %d) AS j, number %% %d AS k, %s FROM numbers(%d))`,
			st.Table("tokens_sample"), endMS-tokensH*hourMS, keys, keys, keyCols, keys*tokensH*60)},
		{"gpu_sample", fmt.Sprintf(`INSERT INTO %s (id, at, version, location, node, uuid, %s, model, utilization_pct,
			memory_used_bytes, memory_total_bytes, power_w, temperature_c)
			SELECT lower(hex(sipHash128('estate.gpu', number))), fromUnixTimestamp64Milli(toInt64(%d + k * %d + s * 17), 'UTC'), '1',
				location, concat(location, '-n', toString(intDiv(s, 8))), concat('GPU-', toString(s)), s %% 8, gpu, u,
				toInt64(85899345920 * u / 100), 85899345920, 100 + 6 * u, 30 + u / 3
			FROM (SELECT number, intDiv(number, %d) AS k, number %% %d AS s, toFloat64((k * 13 + s * 7) %% 101) AS u, %s FROM numbers(%d))`,
			st.Table("gpu_sample"), "`index`", d0, sampleMS, e.GPUs, e.GPUs, cols, int64(e.GPUs)*int64(e.Days)*dayMS/sampleMS)},
		{"price_observed", fmt.Sprintf(`INSERT INTO %s (id, at, version, provider, region, zone, instance_type, gpu_model, gpu_count,
			gpu_memory_gb, market, usd_per_hour, source)
			SELECT lower(hex(sipHash128('estate.price', number))), fromUnixTimestamp64Milli(toInt64(%d + k * %d + s * 100), 'UTC'), '1',
				provider, region, '', itype, gpu, 8, 80, market, %s, 'estate'
			FROM (SELECT number, intDiv(number, %d) AS k, number %% %d AS s, %s FROM numbers(%d))`,
			st.Table("price_observed"), d0, sampleMS, price(fmt.Sprintf("intDiv(k, %d)", hourMS/sampleMS)), seriesPer, seriesPer,
			cols, int64(seriesPer)*int64(e.Days)*dayMS/sampleMS)},
	}
}
