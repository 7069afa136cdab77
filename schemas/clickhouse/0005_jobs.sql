-- Deadline-bound jobs (docs/jobs.md): one table per job event, as in 0001. Columns carry the
-- events' JSON names; the optional times (checkpoint_at, finished_at) are Nullable, NULL where
-- the event leaves them out. A job changes state a few dozen times in its life, so `report jobs`
-- reads a job's whole history from job_state and needs no rollup or latest-state view.
CREATE TABLE IF NOT EXISTS {{.DB}}.job_progress {{onCluster}}
(
    id            String CODEC(ZSTD(1)),
    at            DateTime64(3, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    version       LowCardinality(String),
    job           LowCardinality(String),
    work_done_s   Float64 CODEC(Gorilla, ZSTD(1)),
    checkpoint_at Nullable(DateTime64(3, 'UTC')),
    location      LowCardinality(String),
    market        LowCardinality(String),
    estimated     Bool,
    recorded_at   DateTime64(3, 'UTC') DEFAULT now64(3) CODEC(DoubleDelta, ZSTD(1))
)
ENGINE = {{engine "ReplacingMergeTree"}}
PARTITION BY toYYYYMM(at)
ORDER BY (job, at, id)
SETTINGS {{dedupWindow}};

CREATE TABLE IF NOT EXISTS {{.DB}}.job_state {{onCluster}}
(
    id                     String CODEC(ZSTD(1)),
    at                     DateTime64(3, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    version                LowCardinality(String),
    job                    LowCardinality(String),
    team                   LowCardinality(String),
    state                  LowCardinality(String),
    work_s                 Float64,
    work_done_s            Float64 CODEC(Gorilla, ZSTD(1)),
    deadline               DateTime64(3, 'UTC'),
    overhead_s             Float64,
    location               LowCardinality(String),
    market                 LowCardinality(String),
    gpus_per_replica       Int64,
    usd_per_hour           Float64 CODEC(Gorilla, ZSTD(1)),
    on_demand_usd_per_hour Float64 CODEC(Gorilla, ZSTD(1)),
    usd_spent              Float64 CODEC(Gorilla, ZSTD(1)),
    preemptions            Int64,
    lost_s                 Float64,
    finished_at            Nullable(DateTime64(3, 'UTC')),
    reason                 String CODEC(ZSTD(1)),
    recorded_at            DateTime64(3, 'UTC') DEFAULT now64(3) CODEC(DoubleDelta, ZSTD(1))
)
ENGINE = {{engine "ReplacingMergeTree"}}
PARTITION BY toYYYYMM(at)
ORDER BY (team, job, at, id)
SETTINGS {{dedupWindow}};
