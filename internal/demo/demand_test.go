package demo

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/fleet"
)

const demandHead = "minute,requests,input_tokens,output_tokens\n"

func TestParseDemand(t *testing.T) {
	got, err := ParseDemand(strings.NewReader(demandHead+"360,60,6000,1200\n361, 120 ,0,2.5\n"), "d.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := []Minute{{Requests: 60, Input: 6000, Output: 1200}, {Requests: 120, Input: 0, Output: 2.5}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("ParseDemand = %v, want %v", got, want)
	}
	if got[0].Tokens() != 7200 {
		t.Errorf("Tokens() = %v, want prompt + generated = 7200", got[0].Tokens())
	}
}

func TestParseDemandRefusesMalformed(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "d.csv: want the header"},
		{"header only", demandHead, "holds no minutes"},
		{"other header", "minute,requests,prompt,output\n0,1,1,1\n", `d.csv:1: column 3 is "prompt"`},
		{"missing field", demandHead + "0,1,1,1\n1,1,1\n", "d.csv:3: wrong number of fields"},
		{"negative tokens", demandHead + "0,1,-1,1\n", `d.csv:2: input_tokens "-1"`},
		{"not a number", demandHead + "0,1,1,1\n1,x,1,1\n", `d.csv:3: requests "x"`},
		{"NaN", demandHead + "0,1,1,NaN\n", `output_tokens "NaN"`},
		{"infinite", demandHead + "0,1,Inf,1\n", `input_tokens "Inf"`},
		{"fractional minute", demandHead + "0.5,1,1,1\n", `d.csv:2: minute "0.5"`},
		{"gap", demandHead + "10,1,1,1\n12,1,1,1\n", "d.csv:3: minute 12 follows minute 10"},
		{"out of order", demandHead + "10,1,1,1\n9,1,1,1\n", "minute 9 follows minute 10"},
		{"bare quote", demandHead + "0,1,\"1,1\n", "d.csv:2:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseDemand(strings.NewReader(tt.in), "d.csv")
			if !errors.Is(err, ErrBadDemand) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrBadDemand saying %q", err, tt.want)
			}
		})
	}
}

func FuzzParseDemand(f *testing.F) {
	f.Add(demandHead + "360,13905.6,4629880.5,4276995.3\n361,1,2,3\n")
	f.Add(demandHead + "0,0,0,0\n")
	f.Add("minute,requests\n0,1\n")
	f.Fuzz(func(t *testing.T, in string) {
		ms, err := ParseDemand(strings.NewReader(in), "f.csv")
		if err != nil {
			if !errors.Is(err, ErrBadDemand) {
				t.Fatalf("err %v is not ErrBadDemand", err)
			}
			return
		}
		if len(ms) == 0 || len(ms) > maxDemandMinutes {
			t.Fatalf("%d minutes accepted", len(ms))
		}
		for _, m := range ms {
			if !(m.Requests >= 0 && m.Input >= 0 && m.Output >= 0) {
				t.Fatalf("minute %+v accepted", m)
			}
		}
	})
}

// TestTrafficPeaksAtItsScale checks the scaling rule on a hand-made slice: the peak minute, in
// the workload's metric, is 1.5 times its minimum replicas' worth of the mean of its rates, and
// every minute keeps its tokens per request and its prompt share.
func TestTrafficPeaksAtItsScale(t *testing.T) {
	minutes := []Minute{{Requests: 30, Input: 3000, Output: 1800}, {Requests: 60, Input: 9000, Output: 3000}}
	tests := []struct {
		name   string
		w      fleet.Workload
		wantAt []float64 // demand per second at each minute
	}{
		// Rates 1000 and 3000 tokens/s: a mean replica serves 2000; 2 replicas × 1.5 × 2000 = 6000 tokens/s at
		// the peak (minute 1, 12000 tokens/min = 200/s: scale 30), so minute 0 (80/s) is 2400.
		{"tokens", fleet.Workload{Name: "chat", Replicas: fleet.Replicas{Min: 2}, Scaling: fleet.Scaling{Metric: fleet.MetricTokens},
			Serving: fleet.Serving{PerReplica: map[string]float64{"T4": 1000, "A100-40GB": 3000}}}, []float64{2400, 6000}},
		// One rate of 2 requests/s: 3 replicas × 1.5 × 2 = 9 requests/s at the peak (1/s: scale 9).
		{"requests", fleet.Workload{Name: "sum", Replicas: fleet.Replicas{Min: 3}, GPU: fleet.GPU{Models: []string{"T4"}},
			Scaling: fleet.Scaling{Metric: fleet.MetricRequests, PerReplica: 2}}, []float64{4.5, 9}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := newTraffic(&tt.w, minutes, "d.csv")
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range tt.wantAt {
				m := tr.at(i)
				if got := tr.rate(m); !near(got, want) {
					t.Errorf("minute %d: demand %v/s, want %v", i, got, want)
				}
				if !near(m.Input/m.Tokens(), minutes[i].Input/minutes[i].Tokens()) || !near(m.Tokens()/m.Requests, minutes[i].Tokens()/minutes[i].Requests) {
					t.Errorf("minute %d: %+v does not keep the mix of %+v", i, m, minutes[i])
				}
			}
			if tr.at(5) != tr.at(1) {
				t.Error("past the end, the last minute does not hold")
			}
		})
	}
	idle := fleet.Workload{Name: "idle", Replicas: fleet.Replicas{Min: 1}, Scaling: fleet.Scaling{Metric: fleet.MetricTokens, PerReplica: 100},
		GPU: fleet.GPU{Models: []string{"T4"}}}
	if _, err := newTraffic(&idle, []Minute{{}}, "d.csv"); !errors.Is(err, ErrBadDemand) {
		t.Errorf("a slice without demand: err = %v, want ErrBadDemand", err)
	}
}

func near(a, b float64) bool { return a-b < 1e-9*max(1, b) && b-a < 1e-9*max(1, b) }

// TestLoadTrafficNeedsAFilePerWorkload checks that the demo refuses a workload it cannot drive:
// one without load/<name>.csv, and one not sized by throughput.
func TestLoadTrafficNeedsAFilePerWorkload(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "load"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "load", "chat.csv"), []byte(demandHead+"0,1,100,10\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	chat := fleet.Workload{Name: "chat", Replicas: fleet.Replicas{Min: 1}, GPU: fleet.GPU{Models: []string{"T4"}},
		Scaling: fleet.Scaling{Metric: fleet.MetricTokens, PerReplica: 100}}
	tests := []struct {
		name string
		ws   []fleet.Workload
		want string
	}{
		{"no file", []fleet.Workload{chat, {Name: "other", Scaling: chat.Scaling, GPU: chat.GPU}}, "workload other's demand"},
		{"by utilization", []fleet.Workload{{Name: "chat", Scaling: fleet.Scaling{Metric: fleet.MetricUtilization, PerReplica: 70}}},
			"workload chat scales on gpu_utilization"},
	}
	for _, tt := range tests {
		if _, err := loadTraffic(dir, &fleet.Config{Workloads: tt.ws}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want one saying %q", tt.name, err, tt.want)
		}
	}
	ts, err := loadTraffic(dir, &fleet.Config{Workloads: []fleet.Workload{chat}})
	if err != nil || shortest(ts) != 1 {
		t.Errorf("loadTraffic = %v, %v; want one workload of one minute", ts, err)
	}
}
