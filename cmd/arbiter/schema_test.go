package main

import (
	"reflect"
	"testing"

	"github.com/bursar-dev/bursar/internal/cli/clitest"
	fleetfile "github.com/bursar-dev/bursar/internal/fleet"
)

const fleetSchema = "../../schemas/config/bursar.schema.json"

// TestFleetSchemaMatchesTheCode: there was no JSON Schema for bursar.yaml. The published one names
// exactly the fields fleetfile.Config reads, and the examples validate against it.
func TestFleetSchemaMatchesTheCode(t *testing.T) {
	clitest.SameFields(t, clitest.SchemaFields(t, fleetSchema), clitest.TypeFields(reflect.TypeFor[fleetfile.Config](), nil))
}

func TestFleetExamplesMatchTheSchema(t *testing.T) {
	s := clitest.CompileSchema(t, fleetSchema)
	for _, tt := range []struct{ file, ref string }{
		{"../../examples/bursar.yaml", "../schemas/config/bursar.schema.json"},
		{"../../examples/demo/bursar.yaml", "../../schemas/config/bursar.schema.json"},
	} {
		clitest.ValidateYAML(t, s, tt.file, tt.ref)
	}
}
