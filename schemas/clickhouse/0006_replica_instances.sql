-- Instances on replica.state (docs/billing.md, "Matching charges to replicas"): the ids of the
-- instances (or nodes) a group's ready replicas run on, as the actuator reports them, so that a
-- provider's billed row can be matched to the workload by its ResourceId and hour. `instances`
-- is the sample's own; `prev_instances` those of the interval the row closes (prev_at to at, at
-- prev_ready), as prev_ready and prev_usd_per_hour are. History recorded before this migration,
-- and actuators that do not name instances, leave both empty: reconcile then matches those
-- charges by tag, then location and SKU. ADD COLUMN IF NOT EXISTS makes it safe to run again.
ALTER TABLE {{.DB}}.replica_state {{onCluster}}
    ADD COLUMN IF NOT EXISTS instances Array(String) CODEC(ZSTD(1)) AFTER prev_usd_per_hour,
    ADD COLUMN IF NOT EXISTS prev_instances Array(String) CODEC(ZSTD(1)) AFTER instances;

-- In a cluster, reads go through the Distributed table replica_state_all, which was created
-- with the columns the local table had then. It holds no data of its own (every insert goes to
-- the local tables), so it is dropped here and created again, with the new columns, when the
-- migrations are done (store.Migrate makes a <name>_all over every MergeTree table).
{{if onCluster}}DROP TABLE IF EXISTS {{.DB}}.replica_state_all {{onCluster}};{{end}}
