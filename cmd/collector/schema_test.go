package main

import (
	"reflect"
	"testing"

	"github.com/bursar-dev/bursar/internal/cli/clitest"
	"github.com/bursar-dev/bursar/internal/collect"
)

const collectorSchema = "../../schemas/config/collector.schema.json"

// TestCollectorSchemaMatchesTheCode: there was no JSON Schema for collector.yaml. The published
// one names exactly the fields the collector reads (prices is decoded by collect.Config).
func TestCollectorSchemaMatchesTheCode(t *testing.T) {
	code := clitest.TypeFields(reflect.TypeFor[fileConfig](), map[string]reflect.Type{"prices": reflect.TypeFor[collect.Config]()})
	clitest.SameFields(t, clitest.SchemaFields(t, collectorSchema), code)
}

func TestCollectorExampleMatchesTheSchema(t *testing.T) {
	clitest.ValidateYAML(t, clitest.CompileSchema(t, collectorSchema), "../../examples/collector.yaml",
		"../schemas/config/collector.schema.json")
}
