package schemas

import "embed"

// ClickHouse holds clickhouse/NNNN_name.sql, the numbered migrations of the history store. Each
// file is a text/template rendered by internal/store (database, cluster, TTL) and holds one or
// more statements separated by lines that end in ';'.
//
//go:embed clickhouse/*.sql
var ClickHouse embed.FS
