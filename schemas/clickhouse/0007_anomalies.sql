-- Cost anomalies (docs/anomalies.md): every open, update and close the arbiter's detector
-- published, keyed by event id like the other event tables. An anomaly's rows share `anomaly`;
-- its latest row is its state now.
CREATE TABLE IF NOT EXISTS {{.DB}}.cost_anomaly {{onCluster}}
(
    id                    String CODEC(ZSTD(1)),
    at                    DateTime64(3, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    version               LowCardinality(String),
    anomaly               String CODEC(ZSTD(1)),
    state                 LowCardinality(String),
    series                String CODEC(ZSTD(1)),
    cause                 String CODEC(ZSTD(1)),
    start                 DateTime64(3, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    expected_usd_per_hour Float64 CODEC(Gorilla, ZSTD(1)),
    observed_usd_per_hour Float64 CODEC(Gorilla, ZSTD(1)),
    impact_usd            Float64 CODEC(Gorilla, ZSTD(1)),
    currency              LowCardinality(String),
    moved                 Array(String) CODEC(ZSTD(1)),
    recorded_at           DateTime64(3, 'UTC') DEFAULT now64(3) CODEC(DoubleDelta, ZSTD(1))
)
ENGINE = {{engine "ReplacingMergeTree"}}
PARTITION BY toYYYYMM(at)
ORDER BY (series, anomaly, at, id)
SETTINGS {{dedupWindow}};
