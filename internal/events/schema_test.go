package events_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
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
	ID         string                     `json:"$id"`
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
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	addSchemas(t, c) // under their $id, so the batch schema's references to the others resolve
	s, err := c.Compile(doc.ID)
	if err != nil {
		t.Fatalf("compiling %s: %v", name, err)
	}
	return s, doc
}

// addSchemas adds every schema under schemas/events/ to c by its $id.
func addSchemas(t *testing.T, c *jsonschema.Compiler) {
	t.Helper()
	files, err := fs.Glob(schemas.Events, "events/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no schemas: %v", err)
	}
	for _, f := range files {
		raw, err := schemas.Events.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc schemaDoc
		if err := json.Unmarshal(raw, &doc); err != nil || doc.ID == "" {
			t.Fatalf("%s: no $id (%v)", f, err)
		}
		parsed, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := c.AddResource(doc.ID, parsed); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
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

// sameSubject returns three distinct events of type typ on one subject, for a batch.
func sameSubject(typ events.Type) []events.Event {
	var out []events.Event
	for n := 1; n <= 3; n++ {
		for _, e := range eventstest.Samples(at, n) {
			if e.EventType() != typ {
				continue
			}
			if b, ok := e.(*events.BudgetAlert); ok { // its subject names the policy, which the sample varies
				b.Policy, b.Threshold, b.ID = "llm-monthly", fmt.Sprintf("%d%%", 70+n), ""
				events.Stamp(b)
			}
			out = append(out, e)
		}
	}
	return out
}

func validateJSON(t *testing.T, s *jsonschema.Schema, data []byte) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(v)
}

func TestBatchesMatchTheBatchSchema(t *testing.T) {
	s, _ := loadSchema(t, events.TypeBatch)
	for _, typ := range events.Types {
		t.Run(string(typ), func(t *testing.T) {
			data := eventstest.Batch(t, sameSubject(typ))
			if err := validateJSON(t, s, data); err != nil {
				t.Errorf("%s does not match the batch schema: %v", data, err)
			}
		})
	}
}

// TestBatchSchemaRejectsWhatDecodeAllRejects checks the schema's rules, including each event
// against its own type's schema, on batches DecodeAll refuses.
func TestBatchSchemaRejectsWhatDecodeAllRejects(t *testing.T) {
	s, _ := loadSchema(t, events.TypeBatch)
	var tokens map[string]any
	if err := json.Unmarshal(encoded(t, sameSubject(events.TypeTokensSample)[0]), &tokens); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		change func(m map[string]any, evs []any)
	}{
		{"an event out of its type's range", func(_ map[string]any, evs []any) { evs[1].(map[string]any)["utilization_pct"] = 101 }},
		{"an event missing a field", func(_ map[string]any, evs []any) { delete(evs[0].(map[string]any), "node") }},
		{"an event of another type", func(_ map[string]any, evs []any) { evs[2] = tokens }},
		{"no events", func(m map[string]any, _ []any) { m["events"] = []any{} }},
		{"unknown event type", func(m map[string]any, _ []any) { m["event_type"] = "gpu.guessed" }},
		{"major version 2", func(m map[string]any, _ []any) { m["version"] = "2.0" }},
		{"an id not from this package", func(m map[string]any, _ []any) { m["id"] = "batch-1" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := editBatch(t, tt.change)
			if _, err := events.DecodeAll(data); err == nil {
				t.Fatalf("DecodeAll accepted %s", data)
			}
			if err := validateJSON(t, s, data); err == nil {
				t.Errorf("the batch schema accepted %s", data)
			}
		})
	}
}

// TestBatchSchemaAgreesWithDecodeAll checks that the schema's required fields are those DecodeAll
// requires, and that its properties are the fields a batch carries.
func TestBatchSchemaAgreesWithDecodeAll(t *testing.T) {
	_, doc := loadSchema(t, events.TypeBatch)
	for _, f := range doc.Required {
		_, err := events.DecodeAll(editBatch(t, func(m map[string]any, _ []any) { delete(m, f) }))
		var ee *events.Error
		if !errors.As(err, &ee) || !errors.Is(err, events.ErrMissingField) || ee.Field != f {
			t.Errorf("without %q: DecodeAll error = %v, want that field missing", f, err)
		}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(eventstest.Batch(t, sameSubject(events.TypeGPUSample)), &m); err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(maps.Keys(doc.Properties))
	if want := slices.Sorted(maps.Keys(m)); !slices.Equal(got, want) {
		t.Errorf("schema properties = %v\n a batch carries = %v", got, want)
	}
}
