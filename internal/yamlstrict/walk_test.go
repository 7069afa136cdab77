package yamlstrict_test

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/bursar-dev/bursar/internal/yamlstrict"
)

// TestDecodeNodeKeepsLinesAfterBlankLines: a problem after a blank line inside the node is at
// its own line (re-encoding the node, as before, lost the blank line and reported it a line early).
func TestDecodeNodeKeepsLinesAfterBlankLines(t *testing.T) {
	const doc = "locations:\n  - name: a\n\n\n    regoin: r\n"
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &root); err != nil {
		t.Fatal(err)
	}
	var l location
	ps := yamlstrict.Problems(yamlstrict.DecodeNode(root.Content[0].Content[1].Content[0], &l))
	if len(ps) != 1 || ps[0].Line != 5 || ps[0].Column != 5 || ps[0].Field != "regoin" {
		t.Fatalf("problems = %+v, want field regoin at 5:5", ps)
	}
}

type inner struct {
	Zone string `yaml:"zone"`
}

type shapes struct {
	Ptr    *inner            `yaml:"ptr"`
	Inline inner             `yaml:",inline"`
	Map    map[string]inner  `yaml:"map"`
	Raw    yaml.Node         `yaml:"raw"`
	Any    any               `yaml:"any"`
	Bytes  []byte            `yaml:"bytes"`
	Skip   string            `yaml:"-"`
	Every  []time.Duration   `yaml:"every"`
	Extra  map[string]string `yaml:"extra,omitempty"`
	Plain  int
}

func TestShapes(t *testing.T) {
	tests := []struct {
		name     string
		yaml     string
		wantLine int // 0: decodes
		wantMsg  string
	}{
		{name: "all good", yaml: "ptr: {zone: a}\nzone: b\nmap: {x: {zone: c}}\nraw: {anything: [1]}\nany: {x: 1}\n" +
			"every: [1s, 2m]\nextra: {k: v}\nplain: 3\n"},
		{name: "null pointer", yaml: "ptr: ~\n"},
		{name: "unknown field under a pointer", yaml: "ptr:\n  zoen: a\n", wantLine: 2, wantMsg: "field zoen not found in type yamlstrict_test.inner"},
		{name: "unknown field in a map value", yaml: "map:\n  x: {zoen: a}\n", wantLine: 2, wantMsg: "field zoen not found in type yamlstrict_test.inner"},
		{name: "skipped field is unknown", yaml: "skip: x\n", wantLine: 1, wantMsg: "field skip not found in type yamlstrict_test.shapes"},
		{name: "bad item in a list", yaml: "every:\n  - 1s\n  - later\n", wantLine: 3, wantMsg: "cannot unmarshal !!str `later` into time.Duration"},
		{name: "bytes from a string, as the decoder refuses", yaml: "bytes: abc\n", wantLine: 1, wantMsg: "cannot unmarshal !!str `abc` into []uint8"},
		{name: "int field", yaml: "plain: many\n", wantLine: 1, wantMsg: "cannot unmarshal !!str `many` into int"},
		{name: "mapping into an int", yaml: "plain: {a: 1}\n", wantLine: 1, wantMsg: "cannot unmarshal !!map into int"},
		{name: "repeated key under any", yaml: "any:\n  x: {k: 1, k: 2}\n", wantLine: 2, wantMsg: `mapping key "k" already defined at line 2`},
		{name: "repeated key in a mapping given for a list", yaml: "every: {a: 1, a: 2}\n", wantLine: 1, wantMsg: `mapping key "a" already defined at line 1`},
		{name: "the document is a list", yaml: "- a\n", wantLine: 1, wantMsg: "cannot unmarshal !!seq into yamlstrict_test.shapes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s shapes
			err := yamlstrict.Unmarshal([]byte(tt.yaml), &s)
			if tt.wantLine == 0 {
				if err != nil {
					t.Fatalf("Unmarshal() = %v", err)
				}
				return
			}
			var de *yamlstrict.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("Unmarshal() = %v, want a *DecodeError", err)
			}
			if ps := de.Problems; len(ps) != 1 || ps[0].Line != tt.wantLine || ps[0].Msg != tt.wantMsg {
				t.Fatalf("problems = %+v, want %q at line %d", ps, tt.wantMsg, tt.wantLine)
			}
		})
	}
}

// TestAgreesWithTheDecoder: for each input, Unmarshal fails exactly when yaml's own strict
// decoder does, and names the same lines.
func TestAgreesWithTheDecoder(t *testing.T) {
	for _, in := range agreementSeeds {
		agree(t, []byte(in))
	}
}

var agreementSeeds = []string{
	"locations:\n  - {name: a, region: r, every: 5s}\n",
	"locations:\n  - name: a\n    every: soon\n  - nmae: b\n",
	"locations: [a]\n",
	"locations: {a: 1}\n",
	"locations: {r, r, r}\n", // a fuzz finding: repeated keys are refused before the type
	"locations:\n  - name: [x]\n",
	"locations:\n  - name: {x: 1}\n    every: 1e3\n",
	"locations: ~\n",
	"locations:\n  - ~\n  - {}\n",
	"x: 1\nlocations: []\n",
	"locations:\n  - name: a\n    name: b\n",
	"locations:\n  - every: 10\n",
	"? [a]\n: b\n",
}

func agree(t *testing.T, data []byte) {
	t.Helper()
	var ours, theirs file
	err := yamlstrict.Unmarshal(data, &ours)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	want := dec.Decode(&theirs)
	if errors.Is(want, io.EOF) || errors.Is(err, io.EOF) {
		if !errors.Is(want, io.EOF) || !errors.Is(err, io.EOF) {
			t.Fatalf("%q: Unmarshal() = %v, decoder = %v", data, err, want)
		}
		return
	}
	if (err == nil) != (want == nil) {
		t.Fatalf("%q: Unmarshal() = %v, decoder = %v", data, err, want)
	}
	if err == nil {
		return
	}
	got, exp := lines(yamlstrict.Problems(err)), lines(yamlstrict.Problems(want))
	if len(got) != len(exp) {
		t.Fatalf("%q: problems at lines %v, decoder at %v (%v / %v)", data, got, exp, err, want)
	}
	for i := range got {
		if got[i] != exp[i] {
			t.Fatalf("%q: problems at lines %v, decoder at %v (%v / %v)", data, got, exp, err, want)
		}
	}
}

func lines(ps []yamlstrict.Problem) []int {
	out := make([]int, len(ps))
	for i, p := range ps {
		out[i] = p.Line
	}
	return out
}
