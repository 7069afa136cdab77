package report

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDecodeUsageRows(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []usageRow
		wantErr string
	}{
		{"none", "", nil, ""},
		{"as the engine writes it",
			`{"workload":"chat","location":"aws-use1","provider":"aws","market":"spot","gpu":"H100-80GB","step":1764547200,"usd":1234.5678,"gpu_hours":192,"replica_hours":24}` + "\n" +
				`{"workload":"embed","step":0,"usd":-1.5e-3,"gpu_hours":0.125,"replica_hours":1E2}` + "\n",
			[]usageRow{{keyRow{"chat", "aws-use1", "aws", "spot", "H100-80GB"}, 1764547200, 1234.5678, 192, 24},
				{keyRow{Workload: "embed"}, 0, -1.5e-3, 0.125, 100}}, ""},
		{"escapes and other cases as encoding/json reads them",
			`{"workload":"a\"b\u00e9","USD":2, "Step" : 3}`,
			[]usageRow{{keyRow: keyRow{Workload: "a\"bé"}, Step: 3, USD: 2}}, ""},
		{"a fraction of a step", `{"step":1.5}`, nil, "decoding a result row"},
		{"a string for a number", `{"usd":"1"}`, nil, "decoding a result row"},
		{"cut short", `{"workload":"chat","usd":1`, nil, "decoding a result row"},
		{"not JSON", "<html>", nil, "decoding a result row"},
		{"trailing text", `{"usd":1} x`, nil, "decoding a result row"},
		{"a number out of range", `{"usd":1e999}`, nil, "decoding a result row"},
	}
	for _, tt := range tests {
		got, err := decodeUsageRows([]byte(tt.in))
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error %v, want one with %q", tt.name, err, tt.wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case len(got) != len(tt.want):
			t.Errorf("%s: %d rows, want %d", tt.name, len(got), len(tt.want))
		default:
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("%s: row %d %+v, want %+v", tt.name, i, got[i], tt.want[i])
				}
			}
		}
	}
}

// FuzzDecodeUsageRows checks that a line the scanner reads gives the row encoding/json gives.
func FuzzDecodeUsageRows(f *testing.F) {
	f.Add(`{"workload":"chat","location":"aws-use1","provider":"aws","market":"spot","gpu":"H100-80GB","step":1764547200,"usd":1234.5678,"gpu_hours":192,"replica_hours":24}`)
	f.Add(`{"step":-0,"usd":0.0e+0}`)
	f.Add(`{"usd":01}`)
	f.Add(`{"market":"spot","market":"on_demand"}`)
	f.Add(` { } `)
	f.Fuzz(func(t *testing.T, line string) {
		var got usageRow
		if !scanUsageRow([]byte(line), &got, map[string]string{}) {
			return
		}
		var want usageRow
		if err := json.Unmarshal([]byte(line), &want); err != nil {
			t.Fatalf("scanned %q, which encoding/json refuses: %v", line, err)
		}
		if got != want {
			t.Fatalf("scanned %q as %+v, encoding/json reads %+v", line, got, want)
		}
	})
}
