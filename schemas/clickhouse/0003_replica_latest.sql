-- What reports need from replica_state besides the cost rollup, kept cheap to read as history
-- grows (docs/clickhouse.md, "Reading the open interval and the window's edges").
--
-- replica_latest holds each series' latest replica.state: reports add the interval still open
-- after it, and reading it here costs a few rows per series instead of a GROUP BY over every
-- sample ever recorded. ReplacingMergeTree keeps the row with the greatest `at`; readers still
-- take argMax(..., at) by series, so they are exact before merges and across shards. The view
-- folds each insert to one row per series.
CREATE TABLE IF NOT EXISTS {{.DB}}.replica_latest {{onCluster}}
(
    workload         LowCardinality(String),
    location         LowCardinality(String),
    market           LowCardinality(String),
    offer            LowCardinality(String),
    provider         LowCardinality(String),
    gpu_model        LowCardinality(String),
    at               DateTime64(3, 'UTC'),
    gpus_per_replica Int64,
    ready            Int64,
    usd_per_hour     Float64
)
ENGINE = {{engine "ReplacingMergeTree" "at"}}
ORDER BY (workload, location, market, offer);

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.DB}}.replica_latest_mv {{onCluster}} TO {{.DB}}.replica_latest AS
SELECT
    workload, location, market, offer,
    argMax(provider, s.at) AS provider, argMax(gpu_model, s.at) AS gpu_model, max(s.at) AS at,
    argMax(gpus_per_replica, s.at) AS gpus_per_replica, argMax(ready, s.at) AS ready,
    argMax(usd_per_hour, s.at) AS usd_per_hour
FROM {{.DB}}.replica_state AS s
GROUP BY workload, location, market, offer;

-- Backfill from the history recorded before this migration (every shard's, in a cluster). The
-- view exists already, so no sample falls between the two; running this again only adds rows
-- that the engine and argMax fold away.
INSERT INTO {{.DB}}.replica_latest
SELECT
    workload, location, market, offer,
    argMax(provider, at), argMax(gpu_model, at), max(at),
    argMax(gpus_per_replica, at), argMax(ready, at), argMax(usd_per_hour, at)
FROM {{allShards .DB "replica_state"}}
GROUP BY workload, location, market, offer;

-- The window's edges read the intervals that overlap a part of an hour: prev_at < end and
-- at > start. The sort key finds `at`; this index skips the granules whose intervals all start
-- after the end (without it, the edge at a window's start reads every sample since). Parts
-- written before this migration get it from the mutation below.
ALTER TABLE {{.DB}}.replica_state {{onCluster}} ADD INDEX IF NOT EXISTS prev_at_minmax prev_at TYPE minmax GRANULARITY 1;

ALTER TABLE {{.DB}}.replica_state {{onCluster}} MATERIALIZE INDEX prev_at_minmax;
