package clitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// CompileSchema reads and compiles the JSON Schema at path, with formats asserted.
func CompileSchema(t *testing.T, path string) *jsonschema.Schema {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(path, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(path)
	if err != nil {
		t.Fatalf("compiling %s: %v", path, err)
	}
	return s
}

// ValidateYAML validates the YAML file at path against s, and checks that the file names its
// schema in a yaml-language-server comment, so editors complete and check it.
func ValidateYAML(t *testing.T, s *jsonschema.Schema, path, schemaRef string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "# yaml-language-server: $schema=" + schemaRef; !bytes.Contains(data, []byte(want+"\n")) {
		t.Errorf("%s lacks the line %q", path, want)
	}
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	js, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%s as JSON: %v", path, err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(inst); err != nil {
		t.Errorf("%s does not match its schema: %v", path, err)
	}
}

// SchemaFields lists every field path a JSON Schema describes, e.g. "locations[].actuator.kind",
// following $ref into $defs, items ([]) and additionalProperties ({}).
func SchemaFields(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []string
	var walk func(node map[string]any, at string, depth int)
	walk = func(node map[string]any, at string, depth int) {
		if depth > 20 {
			t.Fatalf("%s: $ref cycle at %s", path, at)
		}
		if ref, ok := node["$ref"].(string); ok {
			def, _ := doc["$defs"].(map[string]any)[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
			if def == nil {
				t.Fatalf("%s: %s: $ref %s not found", path, at, ref)
			}
			walk(def, at, depth+1)
		}
		props, _ := node["properties"].(map[string]any)
		for k, v := range props {
			p := join(at, k)
			out = append(out, p)
			walk(v.(map[string]any), p, depth+1)
		}
		if items, ok := node["items"].(map[string]any); ok {
			walk(items, at+"[]", depth+1)
		}
		if ap, ok := node["additionalProperties"].(map[string]any); ok {
			walk(ap, at+"{}", depth+1)
		}
	}
	walk(doc, "", 0)
	slices.Sort(out)
	return out
}

// TypeFields lists every field path of the YAML that decodes into typ, as SchemaFields does for a
// schema. decodedAs gives the type a field of another type (a yaml.Node decoded later) holds.
func TypeFields(typ reflect.Type, decodedAs map[string]reflect.Type) []string {
	var out []string
	var walk func(t reflect.Type, at string)
	walk = func(t reflect.Type, at string) {
		if d, ok := decodedAs[at]; ok && at != "" {
			t = d
		}
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch {
		case t == reflect.TypeFor[time.Duration](), t == reflect.TypeFor[time.Time]():
		case t.Kind() == reflect.Slice:
			walk(t.Elem(), at+"[]")
		case t.Kind() == reflect.Map:
			walk(t.Elem(), at+"{}")
		case t.Kind() == reflect.Struct:
			for i := range t.NumField() {
				f := t.Field(i)
				name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
				if name == "-" || !f.IsExported() {
					continue
				}
				if strings.Contains(opts, "inline") {
					walk(f.Type, at)
					continue
				}
				if name == "" {
					name = strings.ToLower(f.Name)
				}
				p := join(at, name)
				out = append(out, p)
				walk(f.Type, p)
			}
		}
	}
	walk(typ, "")
	slices.Sort(out)
	return out
}

// SameFields fails t with the fields only one side names.
func SameFields(t *testing.T, schema, code []string) {
	t.Helper()
	if len(schema) == 0 || len(code) == 0 {
		t.Fatalf("the schema names %d fields and the Go config %d: nothing to compare", len(schema), len(code))
	}
	for _, d := range diff(schema, code) {
		t.Errorf("the schema names %s, the Go config does not", d)
	}
	for _, d := range diff(code, schema) {
		t.Errorf("the Go config has %s, the schema does not", d)
	}
}

func diff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func join(at, key string) string {
	if at == "" {
		return key
	}
	return fmt.Sprintf("%s.%s", at, key)
}
