package yamlstrict_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/bursar-dev/bursar/internal/yamlstrict"
)

type location struct {
	Name   string        `yaml:"name"`
	Region string        `yaml:"region"`
	Every  time.Duration `yaml:"every"`
}

type file struct {
	Locations []location `yaml:"locations"`
}

func TestUnmarshalProblems(t *testing.T) {
	tests := []struct {
		name      string
		yaml      string
		want      []yamlstrict.Problem
		wantEmpty bool
	}{
		{name: "good", yaml: "locations:\n  - {name: a, region: r, every: 5s}\n"},
		{name: "empty", yaml: "", wantEmpty: true},
		{name: "unknown field", yaml: "locations:\n  - name: a\n    regoin: r\n",
			want: []yamlstrict.Problem{{Line: 3, Column: 5, Msg: "field regoin not found in type yamlstrict_test.location",
				Field: "regoin", Type: "yamlstrict_test.location"}}},
		{name: "two problems", yaml: "locations:\n  - name: a\n    every: soon\n  - nmae: b\n",
			want: []yamlstrict.Problem{
				{Line: 3, Column: 12, Msg: "cannot unmarshal !!str `soon` into time.Duration"},
				{Line: 4, Column: 5, Msg: "field nmae not found in type yamlstrict_test.location", Field: "nmae", Type: "yamlstrict_test.location"}}},
		{name: "syntax error", yaml: "locations:\n  - name: a\n\tregion: r\n",
			want: []yamlstrict.Problem{{Line: 2, Msg: "found a tab character that violates indentation"}}},
		{name: "duplicate key", yaml: "locations: [a]\nlocations: [b]\n",
			want: []yamlstrict.Problem{{Line: 2, Column: 1, Msg: `mapping key "locations" already defined at line 1`}}},
		{name: "a quoted field name with a space", yaml: "locations:\n  - \"regi on\": r\n",
			want: []yamlstrict.Problem{{Line: 2, Column: 5, Msg: "field regi on not found in type yamlstrict_test.location",
				Field: "regi on", Type: "yamlstrict_test.location"}}},
		{name: "a list where a mapping goes", yaml: "locations:\n  - [a, b]\n",
			want: []yamlstrict.Problem{{Line: 2, Column: 5, Msg: "cannot unmarshal !!seq into yamlstrict_test.location"}}},
		{name: "a mapping where a list goes", yaml: "locations:\n  name: a\n",
			want: []yamlstrict.Problem{{Line: 2, Column: 3, Msg: "cannot unmarshal !!map into []yamlstrict_test.location"}}},
		{name: "a long value is cut", yaml: "locations:\n  - every: a-very-long-duration\n",
			want: []yamlstrict.Problem{{Line: 2, Column: 12, Msg: "cannot unmarshal !!str `a-very-...` into time.Duration"}}},
		{name: "a field given twice", yaml: "locations:\n  - name: a\n    name: b\n",
			want: []yamlstrict.Problem{{Line: 3, Column: 5, Msg: `mapping key "name" already defined at line 2`}}},
		{name: "an unknown field brought in by a merge key", yaml: "base: &b {regoin: r}\nlocations:\n  - <<: *b\n    name: a\n",
			want: []yamlstrict.Problem{{Line: 1, Column: 1, Msg: "field base not found in type yamlstrict_test.file",
				Field: "base", Type: "yamlstrict_test.file"}}},
		{name: "no line", yaml: "locations: \x01\n",
			want: []yamlstrict.Problem{{Line: 0, Msg: "control characters are not allowed"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f file
			err := yamlstrict.Unmarshal([]byte(tt.yaml), &f)
			if tt.wantEmpty != errors.Is(err, io.EOF) {
				t.Fatalf("Unmarshal() = %v, want io.EOF: %v", err, tt.wantEmpty)
			}
			if tt.wantEmpty {
				return
			}
			got := yamlstrict.Problems(err)
			if len(got) != len(tt.want) {
				t.Fatalf("Problems() = %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("problem %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestFormatting(t *testing.T) {
	var f file
	err := yamlstrict.Unmarshal([]byte("locations:\n  - name: a\n    every: soon\n  - nmae: b\n"), &f)
	want := "c.yaml:3: cannot unmarshal !!str `soon` into time.Duration\nc.yaml:4: field nmae not found in type yamlstrict_test.location"
	if got := yamlstrict.Error("c.yaml", err).Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got, want := yamlstrict.Message(err), "cannot unmarshal !!str `soon` into time.Duration; field nmae not found in type yamlstrict_test.location"; got != want {
		t.Errorf("Message() = %q, want %q", got, want)
	}
	if got := (yamlstrict.Problem{Msg: "no line"}).At("c.yaml"); got != "c.yaml: no line" {
		t.Errorf("At() = %q", got)
	}
	if yamlstrict.Problems(nil) != nil {
		t.Error("Problems(nil) != nil")
	}
}

// TestDecodeNodeCountsLinesInTheFile: a node from the middle of a file reports its problems at
// the file's lines, in block and flow style.
func TestDecodeNodeCountsLinesInTheFile(t *testing.T) {
	const doc = "# header\nother: 1\nlocations:\n  - name: a\n    regoin: r\n  - {name: b, every: soon}\n"
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &root); err != nil {
		t.Fatal(err)
	}
	items := root.Content[0].Content[3].Content
	tests := []struct {
		name     string
		node     *yaml.Node
		wantLine int
	}{
		{name: "block", node: items[0], wantLine: 5},
		{name: "flow", node: items[1], wantLine: 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l location
			ps := yamlstrict.Problems(yamlstrict.DecodeNode(tt.node, &l))
			if len(ps) != 1 || ps[0].Line != tt.wantLine {
				t.Fatalf("problems = %+v, want one at line %d", ps, tt.wantLine)
			}
		})
	}
}

func FuzzUnmarshal(f *testing.F) {
	f.Add([]byte("locations:\n  - {name: a, region: r, every: 5s}\n"))
	f.Add([]byte("locations:\n  - name: a\n    every: soon\n  - nmae: b\n"))
	f.Add([]byte("locations:\n\t- x"))
	for _, in := range agreementSeeds {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !bytes.ContainsAny(data, "*<") { // aliases and merges the walk leaves to the decoder
			agree(t, data)
		}
		var v file
		err := yamlstrict.Unmarshal(data, &v)
		if err == nil || errors.Is(err, io.EOF) {
			return
		}
		ps := yamlstrict.Problems(err)
		if len(ps) == 0 {
			t.Fatalf("no problems from %v", err)
		}
		for _, p := range ps {
			if p.Line < 0 || p.Msg == "" || !strings.HasPrefix(p.At("f.yaml"), "f.yaml") {
				t.Fatalf("problem %+v from %v", p, err)
			}
		}
	})
}

func TestLine(t *testing.T) {
	const doc = `locations:
  - name: a
    actuator:
      kind: sim
  - {name: b, region: r}
workloads: []
`
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &root); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		node     *yaml.Node
		path     string
		wantLine int
	}{
		{name: "key", node: &root, path: "workloads", wantLine: 6},
		{name: "nested block: the key's line", node: &root, path: "locations[0].actuator", wantLine: 3},
		{name: "deep key", node: &root, path: "locations[0].actuator.kind", wantLine: 4},
		{name: "flow item", node: &root, path: "locations[1].region", wantLine: 5},
		{name: "missing field: its section", node: &root, path: "locations[1].provider", wantLine: 5},
		{name: "index past the end: the list's key", node: &root, path: "locations[7].name", wantLine: 1},
		{name: "index into a mapping", node: &root, path: "workloads.x", wantLine: 6},
		{name: "empty path", node: &root, path: "", wantLine: 1},
		{name: "from a node", node: root.Content[0].Content[1].Content[1], path: "region", wantLine: 5},
		{name: "empty file", node: nil, path: "locations", wantLine: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := yamlstrict.Line(tt.node, tt.path); got != tt.wantLine {
				t.Errorf("Line(%q) = %d, want %d", tt.path, got, tt.wantLine)
			}
		})
	}
}
