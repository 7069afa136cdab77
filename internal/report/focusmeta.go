package report

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/billing"
)

// FOCUSMetadata is the FOCUS metadata of an export in version: billing.NewMetadata's, with the
// version's column table, so 1.3's columns get their FOCUS types and the schema names 1.3. For 1.2
// it is the same as billing.NewMetadata's, schema id included.
func FOCUSMetadata(version, generator string, columns []string, extra map[string]billing.Type, created time.Time) (billing.Metadata, error) {
	s, err := focusSpecOf(version)
	if err != nil {
		return billing.Metadata{}, err
	}
	defs := make([]billing.ColumnDefinition, 0, len(columns))
	var sig strings.Builder
	for _, c := range columns {
		d := billing.ColumnDefinition{ColumnName: c, DataType: billing.String.String()}
		if col, ok := s.lookup(c); ok {
			d.DataType = col.Type.String()
		} else {
			d.ProviderName = generator
			if t, ok := extra[c]; ok {
				d.DataType = t.String()
			}
		}
		defs = append(defs, d)
		sig.WriteString(d.ColumnName + ":" + d.DataType + ";")
	}
	sum := sha256.Sum256([]byte(version + ";" + sig.String()))
	return billing.Metadata{DataGenerator: billing.DataGenerator{DataGenerator: generator}, Schemas: []billing.Schema{{
		SchemaID: hex.EncodeToString(sum[:8]), FocusVersion: version, CreationDate: created.UTC().Format(time.RFC3339),
		ColumnDefinitions: defs}}}, nil
}
