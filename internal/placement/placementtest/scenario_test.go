package placementtest

import (
	"strings"
	"testing"
)

func TestParseRates(t *testing.T) {
	tests := []struct {
		name, line string
		want       map[string]float64
		wantErr    string
	}{
		{name: "two models", line: "workload w rates=A100-80GB:172,H100-80GB:829 rate=1000",
			want: map[string]float64{"A100-80GB": 172, "H100-80GB": 829}},
		{name: "no rates", line: "workload w demand=2"},
		{name: "missing colon", line: "workload w rates=A100", wantErr: `"A100" is not MODEL:RATE`},
		{name: "not a number", line: "workload w rates=A100:fast", wantErr: `"A100:fast" is not MODEL:RATE`},
		{name: "empty model", line: "workload w rates=:3", wantErr: `":3" is not MODEL:RATE`},
		{name: "bad demand rate", line: "workload w rates=A100:3 rate=lots", wantErr: `rate="lots" is not a number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, err := Parse("t.scenario", strings.NewReader(tt.line))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "t.scenario:1: ") {
					t.Fatalf("Parse error %v, want t.scenario:1: ... %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := sc.Snapshot.Workloads[0].Throughput
			if len(got) != len(tt.want) {
				t.Fatalf("throughput %v, want %v", got, tt.want)
			}
			for m, r := range tt.want {
				if got[m] != r {
					t.Fatalf("throughput %v, want %v", got, tt.want)
				}
			}
		})
	}
}

// FuzzParse checks a scenario never makes the parser panic, and that its errors name the line.
func FuzzParse(f *testing.F) {
	f.Add("workload w rates=A100-80GB:172,H100-80GB:829 rate=1000 unit=tokens/s\nplan\n  launch w o 1 demand_up")
	f.Add("offer o location=a gpu=A100 price=1\nhistory o preempted at=-10m lived=1h")
	f.Add("workload w rates=:,: rate=NaN")
	f.Fuzz(func(t *testing.T, text string) {
		_, err := Parse("f.scenario", strings.NewReader(text))
		if err != nil && !strings.HasPrefix(err.Error(), "f.scenario:") && !strings.HasPrefix(err.Error(), "reading f.scenario") {
			t.Fatalf("error %q does not name the file", err)
		}
	})
}
