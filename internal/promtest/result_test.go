package promtest

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestDecodeResult(t *testing.T) {
	tests := []struct {
		name       string
		typ, raw   string
		want       []Sample
		wantErrHas string
	}{
		{name: "vector", typ: "vector",
			raw:  `[{"metric":{"job":"arbiter"},"value":[1700000000.5,"1.25"]},{"metric":{},"value":[1,"NaN"]}]`,
			want: []Sample{{Labels: map[string]string{"job": "arbiter"}, Value: 1.25}, {Labels: map[string]string{}, Value: math.NaN()}}},
		{name: "empty vector", typ: "vector", raw: `[]`, want: []Sample{}},
		{name: "scalar", typ: "scalar", raw: `[1,"+Inf"]`, want: []Sample{{Value: math.Inf(1)}}},
		{name: "matrix", typ: "matrix", raw: `[]`, wantErrHas: `"matrix"`},
		{name: "value not a string", typ: "vector", raw: `[{"metric":{},"value":[1,2]}]`, wantErrHas: "sample 0"},
		{name: "value not a number", typ: "scalar", raw: `[1,"abc"]`, wantErrHas: `"abc" is not a number`},
		{name: "short point", typ: "scalar", raw: `[1]`, wantErrHas: "1 elements"},
		{name: "not json", typ: "vector", raw: `[{`, wantErrHas: "decoding a vector"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeResult(tt.typ, json.RawMessage(tt.raw))
			if tt.wantErrHas != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErrHas) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErrHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d samples, want %d", len(got), len(tt.want))
			}
			for i := range got {
				g, w := got[i], tt.want[i]
				same := g.Value == w.Value || math.IsNaN(g.Value) && math.IsNaN(w.Value)
				if !same || len(g.Labels) != len(w.Labels) || g.Labels["job"] != w.Labels["job"] {
					t.Errorf("sample %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func FuzzDecodeResult(f *testing.F) {
	f.Add("vector", `[{"metric":{"a":"b"},"value":[1,"2"]}]`)
	f.Add("scalar", `[1,"3"]`)
	f.Add("vector", `[{"metric":null,"value":null}]`)
	f.Fuzz(func(t *testing.T, typ, raw string) {
		got, err := decodeResult(typ, json.RawMessage(raw))
		if err == nil && typ != "vector" && typ != "scalar" {
			t.Fatalf("type %q accepted", typ)
		}
		if err != nil && got != nil {
			t.Fatalf("an error and samples: %v, %v", err, got)
		}
	})
}
