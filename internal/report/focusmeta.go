package report

import (
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
	return billing.MetadataOf(version, s.lookup, generator, columns, extra, created), nil
}
