package billing

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// Metadata is a FOCUS dataset's metadata (the specification's "Metadata" section): who generated
// it and the schema it follows, so a reader knows the FOCUS version and each column's type
// without guessing from the data.
type Metadata struct {
	DataGenerator DataGenerator `json:"DataGenerator"`
	Schemas       []Schema      `json:"Schemas"`
}

// DataGenerator names the producer of the dataset.
type DataGenerator struct {
	DataGenerator string `json:"DataGenerator"`
}

// Schema describes one version of the dataset's columns.
type Schema struct {
	SchemaID          string             `json:"SchemaId"`
	FocusVersion      string             `json:"FocusVersion"`
	CreationDate      string             `json:"CreationDate"`
	ColumnDefinitions []ColumnDefinition `json:"ColumnDefinitions"`
}

// ColumnDefinition is one column of a schema.
type ColumnDefinition struct {
	ColumnName   string `json:"ColumnName"`
	DataType     string `json:"DataType"`
	ProviderName string `json:"ProviderName,omitempty"` // set on provider (x_) columns
}

// NewMetadata describes a dataset of columns made by generator at created, in this package's
// FOCUS version. Provider columns take their type from extra (String when absent). The schema id
// is a digest of the column definitions, so the same columns always have the same id.
func NewMetadata(generator string, columns []string, extra map[string]Type, created time.Time) Metadata {
	return MetadataOf(Version, Lookup, generator, columns, extra, created)
}

// MetadataOf is NewMetadata for a FOCUS version whose columns lookup describes (another version's
// table than this package's).
func MetadataOf(version string, lookup func(string) (Column, bool), generator string, columns []string,
	extra map[string]Type, created time.Time) Metadata {
	defs := make([]ColumnDefinition, 0, len(columns))
	var sig strings.Builder
	for _, c := range columns {
		d := ColumnDefinition{ColumnName: c, DataType: String.String()}
		if col, ok := lookup(c); ok {
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
	return Metadata{DataGenerator: DataGenerator{generator}, Schemas: []Schema{{
		SchemaID: hex.EncodeToString(sum[:8]), FocusVersion: version, CreationDate: created.UTC().Format(time.RFC3339),
		ColumnDefinitions: defs}}}
}
