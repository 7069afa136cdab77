package events_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/events/eventstest"
	"github.com/bursar-dev/bursar/schemas"
)

type schemaDoc struct {
	Required   []string                   `json:"required"`
	Properties map[string]json.RawMessage `json:"properties"`
}

func loadSchema(t *testing.T, typ events.Type) (*jsonschema.Schema, schemaDoc) {
	t.Helper()
	name := fmt.Sprintf("events/%s.json", typ)
	raw, err := schemas.Events.ReadFile(name)
	if err != nil {
		t.Fatalf("no schema for %s: %v", typ, err)
	}
	var doc schemaDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	parsed, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(name, parsed); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(name)
	if err != nil {
		t.Fatalf("compiling %s: %v", name, err)
	}
	return s, doc
}

func TestSamplesMatchSchemas(t *testing.T) {
	for _, e := range eventstest.Samples(at, 3) {
		t.Run(string(e.EventType()), func(t *testing.T) {
			s, _ := loadSchema(t, e.EventType())
			data, err := events.Encode(e)
			if err != nil {
				t.Fatal(err)
			}
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(v); err != nil {
				t.Errorf("%s does not match its schema: %v", data, err)
			}
		})
	}
}

func TestSchemaRejectsWhatDecodeRejects(t *testing.T) {
	s, _ := loadSchema(t, events.TypeGPUSample)
	data := mutate(t, events.TypeGPUSample, func(m map[string]any) { m["utilization_pct"] = 101 })
	v, _ := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err := s.Validate(v); err == nil {
		t.Error("schema accepted utilization 101%")
	}
}

// TestSchemasAgreeWithGoTypes checks that each schema's required list equals the Go type's fields
// without omitempty, and that both name the same properties.
func TestSchemasAgreeWithGoTypes(t *testing.T) {
	for _, typ := range events.Types {
		t.Run(string(typ), func(t *testing.T) {
			_, doc := loadSchema(t, typ)
			rt := reflect.TypeOf(events.New(typ)).Elem()
			wantReq, wantAll := goFields(rt, true), goFields(rt, false)
			gotReq := slices.Sorted(slices.Values(doc.Required))
			if !slices.Equal(gotReq, wantReq) {
				t.Errorf("schema required = %v\n      Go requires = %v", gotReq, wantReq)
			}
			var gotAll []string
			for k := range doc.Properties {
				gotAll = append(gotAll, k)
			}
			slices.Sort(gotAll)
			if !slices.Equal(gotAll, wantAll) {
				t.Errorf("schema properties = %v\n        Go fields = %v", gotAll, wantAll)
			}
		})
	}
}

func goFields(rt reflect.Type, onlyRequired bool) []string {
	var out []string
	var walk func(reflect.Type)
	walk = func(rt reflect.Type) {
		for i := range rt.NumField() {
			f := rt.Field(i)
			if f.Anonymous {
				walk(f.Type)
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if onlyRequired && strings.Contains(opts, "omitempty") {
				continue
			}
			out = append(out, name)
		}
	}
	walk(rt)
	slices.Sort(out)
	return out
}
