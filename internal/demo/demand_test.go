package demo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/serving"
)

const demandHead = "minute,requests,input_tokens,output_tokens\n"

// TestTrafficPeaksAtItsScale checks the scaling rule on a hand-made slice: the peak minute, in
// the workload's metric, is 1.5 times its minimum replicas' worth of the mean of its rates, and
// every minute keeps its tokens per request and its prompt share.
func TestTrafficPeaksAtItsScale(t *testing.T) {
	minutes := []serving.Minute{{Requests: 30, Input: 3000, Output: 1800}, {Requests: 60, Input: 9000, Output: 3000}}
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
	if _, err := newTraffic(&idle, []serving.Minute{{}}, "d.csv"); err == nil || !strings.Contains(err.Error(), "d.csv: no demand") {
		t.Errorf("a slice without demand: err = %v, want one saying there is no demand in d.csv", err)
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
