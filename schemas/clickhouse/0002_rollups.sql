-- Rollups that reports and dashboards read, kept by materialized views as rows arrive.
--
-- Cost is exact: every replica.state row closes the interval [prev_at, at) of its series at the
-- previous sample's ready count and price (the recorder fills prev_*), and the view splits that
-- interval at hour boundaries in integer milliseconds, so the hours of a series sum to the
-- integral of ready x usd_per_hour over time. The interval still open after a series' latest
-- sample is not in the rollup until the next sample closes it; reports add it from
-- replica_state (see docs/clickhouse.md). A redelivered or duplicate sample closes an empty
-- interval and adds nothing.

CREATE TABLE IF NOT EXISTS {{.DB}}.cost_hourly {{onCluster}}
(
    workload      LowCardinality(String),
    location      LowCardinality(String),
    provider      LowCardinality(String),
    market        LowCardinality(String),
    gpu_model     LowCardinality(String),
    hour          DateTime('UTC') CODEC(DoubleDelta, ZSTD(1)),
    usd           Float64 CODEC(Gorilla, ZSTD(1)),
    gpu_hours     Float64 CODEC(Gorilla, ZSTD(1)),
    replica_hours Float64 CODEC(Gorilla, ZSTD(1))
)
ENGINE = {{engine "SummingMergeTree"}}
PARTITION BY toYYYYMM(hour)
ORDER BY (workload, location, provider, market, gpu_model, hour);

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.DB}}.cost_hourly_mv {{onCluster}} TO {{.DB}}.cost_hourly AS
SELECT
    workload, location, provider, market, gpu_model,
    toDateTime(intDiv(hour_ms, 1000), 'UTC') AS hour,
    prev_ready * prev_usd_per_hour * ms / 3600000 AS usd,
    prev_ready * gpus_per_replica * ms / 3600000 AS gpu_hours,
    prev_ready * ms / 3600000 AS replica_hours
FROM
(
    SELECT
        workload, location, provider, market, gpu_model, gpus_per_replica, prev_ready, prev_usd_per_hour,
        toUInt64(toUnixTimestamp64Milli(prev_at)) AS from_ms,
        toUInt64(toUnixTimestamp64Milli(at)) AS to_ms,
        arrayJoin(range(toUInt64(intDiv(from_ms, 3600000)), toUInt64(intDiv(to_ms - 1, 3600000) + 1))) * 3600000 AS hour_ms,
        least(to_ms, hour_ms + 3600000) - greatest(from_ms, hour_ms) AS ms
    FROM {{.DB}}.replica_state
    WHERE to_ms > from_ms AND prev_ready > 0
);

-- Tokens per hour: the increase of each replica's counters since its previous sample (the
-- recorder computes delta_*, restarting from zero on a reset), in the hour of the sample that
-- closes the increase.
CREATE TABLE IF NOT EXISTS {{.DB}}.tokens_hourly {{onCluster}}
(
    workload          LowCardinality(String),
    location          LowCardinality(String),
    hour              DateTime('UTC') CODEC(DoubleDelta, ZSTD(1)),
    prompt_tokens     Int64 CODEC(T64, ZSTD(1)),
    generation_tokens Int64 CODEC(T64, ZSTD(1)),
    requests          Int64 CODEC(T64, ZSTD(1))
)
ENGINE = {{engine "SummingMergeTree"}}
PARTITION BY toYYYYMM(hour)
ORDER BY (workload, location, hour);

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.DB}}.tokens_hourly_mv {{onCluster}} TO {{.DB}}.tokens_hourly AS
SELECT
    workload, location,
    toStartOfHour(toDateTime(at, 'UTC')) AS hour,
    delta_prompt_tokens AS prompt_tokens,
    delta_generation_tokens AS generation_tokens,
    delta_requests AS requests
FROM {{.DB}}.tokens_sample
WHERE delta_prompt_tokens != 0 OR delta_generation_tokens != 0 OR delta_requests != 0;
