-- Billed cost from the providers' FOCUS exports (report import-billing, docs/billing.md).
--
-- An export is the set of files one import read for one provider, billing account and billing
-- period; export_id is a digest of their contents, so the same files always have the same id.
-- billing_charge holds every charge of every export imported; billing_export registers each
-- export once its charges are in. Readers take, per provider, account and period, only the
-- export with the greatest (covered_until, imported_at): a newer export for a period replaces the
-- older one without deleting anything, a query never sees two, and charges written by an import
-- that stopped before registering its export are never read.
CREATE TABLE IF NOT EXISTS {{.DB}}.billing_charge {{onCluster}}
(
    export_id          String,
    provider           LowCardinality(String),
    billing_account_id String,
    period_start       DateTime64(3, 'UTC'),
    row                UInt64,
    file               String CODEC(ZSTD(1)),
    provider_name      LowCardinality(String),
    sub_account_id     String,
    currency           LowCardinality(String),
    period_end         DateTime64(3, 'UTC'),
    charge_start       DateTime64(3, 'UTC'),
    charge_end         DateTime64(3, 'UTC'),
    category           LowCardinality(String),
    class              LowCardinality(String),
    pricing_category   LowCardinality(String),
    billed_cost        Float64,
    effective_cost     Float64,
    contracted_cost    Float64,
    list_cost          Float64,
    commitment_id      String CODEC(ZSTD(1)),
    commitment_status  LowCardinality(String),
    region             LowCardinality(String),
    zone               LowCardinality(String),
    resource_id        String CODEC(ZSTD(1)),
    sku_id             String CODEC(ZSTD(1)),
    sku_price_id       String CODEC(ZSTD(1)),
    instance_type      LowCardinality(String),
    quantity           Float64,
    unit               LowCardinality(String),
    tags               String CODEC(ZSTD(3))
)
ENGINE = {{engine "ReplacingMergeTree"}}
PARTITION BY toYYYYMM(period_start)
ORDER BY (provider, billing_account_id, period_start, export_id, row)
SETTINGS {{dedupWindow}};

CREATE TABLE IF NOT EXISTS {{.DB}}.billing_export {{onCluster}}
(
    provider           LowCardinality(String),
    billing_account_id String,
    period_start       DateTime64(3, 'UTC'),
    export_id          String,
    files              Array(String),
    charges            UInt64,
    covered_until      DateTime64(3, 'UTC'),
    imported_at        DateTime64(3, 'UTC')
)
ENGINE = {{engine "ReplacingMergeTree"}}
ORDER BY (provider, billing_account_id, period_start, export_id)
SETTINGS {{dedupWindow}};
