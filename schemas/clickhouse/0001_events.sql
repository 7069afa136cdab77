-- One table per event type. Columns carry the events' JSON names; `id` is the event's
-- deterministic id and the last sort key, so ReplacingMergeTree folds a redelivered event into one
-- row. Sort keys put low-cardinality columns first and time last. Times are DateTime64(3, 'UTC').
-- Raw telemetry (GPU and token samples) expires after {{.TelemetryTTLDays}} days; the rollups keep
-- their history.

CREATE TABLE IF NOT EXISTS {{.DB}}.price_observed {{onCluster}}
(
    id            String CODEC(ZSTD(1)),
    at            DateTime64(3, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    version       LowCardinality(String),
    provider      LowCardinality(String),
    region        LowCardinality(String),
    zone          LowCardinality(String),
    instance_type LowCardinality(String),
    gpu_model     LowCardinality(String),
    gpu_count     Int64 CODEC(T64, ZSTD(1)),
    gpu_memory_gb Float64 CODEC(Gorilla, ZSTD(1)),
    market        LowCardinality(String),
    usd_per_hour  Float64 CODEC(Gorilla, ZSTD(1)),
    source        LowCardinality(String),
    recorded_at   DateTime64(3, 'UTC') DEFAULT now64(3) CODEC(DoubleDelta, ZSTD(1))
)
ENGINE = {{engine "ReplacingMergeTree"}}
PARTITION BY toYYYYMM(at)
ORDER BY (provider, region, market, gpu_model, instance_type, zone, at, id)
SETTINGS {{dedupWindow}};

CREATE TABLE IF NOT EXISTS {{.DB}}.capacity_reclaimed {{onCluster}}
(
    id          String CODEC(ZSTD(1)),
    at          DateTime64(3, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    version     LowCardinality(String),
    provider    LowCardinality(String),
    region      LowCardinality(String),
    location    LowCardinality(String),
    zone        LowCardinality(String),
    instance    String CODEC(ZSTD(1)),
    node        String CODEC(ZSTD(1)),
    kind        LowCardinality(String),
    notice_at   DateTime64(3, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    deadline    DateTime64(3, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    source      LowCardinality(String),
    recorded_at DateTime64(3, 'UTC') DEFAULT now64(3) CODEC(DoubleDelta, ZSTD(1))
)
ENGINE = {{engine "ReplacingMergeTree"}}
PARTITION BY toYYYYMM(at)
ORDER BY (provider, region, location, kind, at, id)
SETTINGS {{dedupWindow}};

CREATE TABLE IF NOT EXISTS {{.DB}}.gpu_sample {{onCluster}}
(
    id                 String CODEC(ZSTD(1)),
    at                 DateTime64(3, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    version            LowCardinality(String),
    location           LowCardinality(String),
    node               LowCardinality(String),
    uuid               LowCardinality(String),
    `index`            Int64 CODEC(T64, ZSTD(1)),
    model              LowCardinality(String),
    utilization_pct    Float64 CODEC(Gorilla, ZSTD(1)),
    memory_used_bytes  Int64 CODEC(Delta, ZSTD(1)),
    memory_total_bytes Int64 CODEC(T64, ZSTD(1)),
    power_w            Float64 CODEC(Gorilla, ZSTD(1)),
    temperature_c      Float64 CODEC(Gorilla, ZSTD(1)),
    recorded_at        DateTime64(3, 'UTC') DEFAULT now64(3) CODEC(DoubleDelta, ZSTD(1))
)
ENGINE = {{engine "ReplacingMergeTree"}}
PARTITION BY toYYYYMMDD(at)
ORDER BY (location, node, uuid, at, id)
TTL toDateTime(at) + toIntervalDay({{.TelemetryTTLDays}})
SETTINGS {{dedupWindow}}, ttl_only_drop_parts = 1;

-- Token counters are monotonic per replica. The recorder adds the increase since the replica's
-- previous sample (delta_*; a reset restarts from zero), which the tokens rollup sums.
CREATE TABLE IF NOT EXISTS {{.DB}}.tokens_sample {{onCluster}}
(
    id                      String CODEC(ZSTD(1)),
    at                      DateTime64(3, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    version                 LowCardinality(String),
    location                LowCardinality(String),
    workload                LowCardinality(String),
    replica                 LowCardinality(String),
    server                  LowCardinality(String),
    prompt_tokens           Int64 CODEC(DoubleDelta, ZSTD(1)),
    generation_tokens       Int64 CODEC(DoubleDelta, ZSTD(1)),
    requests                Int64 CODEC(DoubleDelta, ZSTD(1)),
    reset                   Bool,
    delta_prompt_tokens     Int64 CODEC(T64, ZSTD(1)),
    delta_generation_tokens Int64 CODEC(T64, ZSTD(1)),
    delta_requests          Int64 CODEC(T64, ZSTD(1)),
    recorded_at             DateTime64(3, 'UTC') DEFAULT now64(3) CODEC(DoubleDelta, ZSTD(1))
)
ENGINE = {{engine "ReplacingMergeTree"}}
PARTITION BY toYYYYMMDD(at)
ORDER BY (location, workload, replica, at, id)
TTL toDateTime(at) + toIntervalDay({{.TelemetryTTLDays}})
SETTINGS {{dedupWindow}}, ttl_only_drop_parts = 1;

-- A replica.state row also carries the interval it closes: from the series' previous sample
-- (prev_at) to this one, at the previous sample's ready count and price. The cost rollup
-- integrates those intervals exactly. A series' first sample closes an empty interval.
CREATE TABLE IF NOT EXISTS {{.DB}}.replica_state {{onCluster}}
(
    id                String CODEC(ZSTD(1)),
    at                DateTime64(3, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    version           LowCardinality(String),
    workload          LowCardinality(String),
    location          LowCardinality(String),
    provider          LowCardinality(String),
    market            LowCardinality(String),
    offer             LowCardinality(String),
    gpu_model         LowCardinality(String),
    gpus_per_replica  Int64 CODEC(T64, ZSTD(1)),
    usd_per_hour      Float64 CODEC(Gorilla, ZSTD(1)),
    desired           Int64 CODEC(T64, ZSTD(1)),
    ready             Int64 CODEC(T64, ZSTD(1)),
    prev_at           DateTime64(3, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    prev_ready        Int64 CODEC(T64, ZSTD(1)),
    prev_usd_per_hour Float64 CODEC(Gorilla, ZSTD(1)),
    recorded_at       DateTime64(3, 'UTC') DEFAULT now64(3) CODEC(DoubleDelta, ZSTD(1))
)
ENGINE = {{engine "ReplacingMergeTree"}}
PARTITION BY toYYYYMM(at)
ORDER BY (workload, location, market, offer, at, id)
SETTINGS {{dedupWindow}};

CREATE TABLE IF NOT EXISTS {{.DB}}.plan_decided {{onCluster}}
(
    id                  String CODEC(ZSTD(1)),
    at                  DateTime64(3, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    version             LowCardinality(String),
    workload            LowCardinality(String),
    plan_id             String CODEC(ZSTD(1)),
    actions             Array(Tuple(
                            id String,
                            kind LowCardinality(String),
                            location LowCardinality(String),
                            offer LowCardinality(String),
                            market LowCardinality(String),
                            replicas Int64,
                            delta Int64,
                            reason String,
                            needs_approval Bool)) CODEC(ZSTD(3)),
    usd_per_hour_before Float64 CODEC(Gorilla, ZSTD(1)),
    usd_per_hour_after  Float64 CODEC(Gorilla, ZSTD(1)),
    needs_approval      Bool,
    recorded_at         DateTime64(3, 'UTC') DEFAULT now64(3) CODEC(DoubleDelta, ZSTD(1))
)
ENGINE = {{engine "ReplacingMergeTree"}}
PARTITION BY toYYYYMM(at)
ORDER BY (workload, at, id)
SETTINGS {{dedupWindow}};

CREATE TABLE IF NOT EXISTS {{.DB}}.action_updated {{onCluster}}
(
    id          String CODEC(ZSTD(1)),
    at          DateTime64(3, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    version     LowCardinality(String),
    workload    LowCardinality(String),
    action_id   String CODEC(ZSTD(1)),
    plan_id     String CODEC(ZSTD(1)),
    status      LowCardinality(String),
    kind        LowCardinality(String),
    location    LowCardinality(String),
    offer       LowCardinality(String),
    market      LowCardinality(String),
    replicas    Int64 CODEC(T64, ZSTD(1)),
    reason      String CODEC(ZSTD(1)),
    actor       LowCardinality(String),
    detail      String CODEC(ZSTD(3)),
    recorded_at DateTime64(3, 'UTC') DEFAULT now64(3) CODEC(DoubleDelta, ZSTD(1))
)
ENGINE = {{engine "ReplacingMergeTree"}}
PARTITION BY toYYYYMM(at)
ORDER BY (workload, status, at, id)
SETTINGS {{dedupWindow}};

CREATE TABLE IF NOT EXISTS {{.DB}}.budget_alert {{onCluster}}
(
    id           String CODEC(ZSTD(1)),
    at           DateTime64(3, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    version      LowCardinality(String),
    policy       LowCardinality(String),
    scope        String CODEC(ZSTD(1)),
    period       LowCardinality(String),
    period_start DateTime64(3, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    basis        LowCardinality(String),
    threshold    LowCardinality(String),
    spend        Float64 CODEC(Gorilla, ZSTD(1)),
    `limit`      Float64 CODEC(Gorilla, ZSTD(1)),
    currency     LowCardinality(String),
    cleared      Bool,
    recorded_at  DateTime64(3, 'UTC') DEFAULT now64(3) CODEC(DoubleDelta, ZSTD(1))
)
ENGINE = {{engine "ReplacingMergeTree"}}
PARTITION BY toYYYYMM(at)
ORDER BY (policy, basis, at, id)
SETTINGS {{dedupWindow}};
