// Package schemas holds the versioned contracts that travel with the binaries: the JSON Schema of
// every event type and the ClickHouse migrations.
package schemas

import "embed"

// Events holds events/<type>.json, one JSON Schema per event type.
//
//go:embed events/*.json
var Events embed.FS
