package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/store/storetest"
)

const (
	codeSpot  = "aws-use1/us-east-1b/g5.xlarge/spot"
	batchSpot = "aws-use1/us-east-1b/g5.2xlarge/spot"
	embedODA  = "aws-use1/us-east-1a/p4de.24xlarge/on_demand"
)

// capacityFleet rates chat (tokens) at 1000 tokens/s a replica on H100 and 400 on A100, target
// 90 %; code (requests) at 2 requests/s on its one model, target 75 %; embed (tokens) at 100 on
// H100, no target; batch is scaled on utilization; rag is rated but never reported.
func capacityFleet() *fleet.Config {
	f := testFleet()
	target := func(v float64) *float64 { return &v }
	f.Workloads = []fleet.Workload{
		{Name: "chat", GPU: fleet.GPU{Models: []string{"H100-80GB", "A100-80GB"}},
			Scaling: fleet.Scaling{Metric: fleet.MetricTokens},
			Serving: fleet.Serving{PerReplica: map[string]float64{"H100-80GB": 1000, "A100-80GB": 400}, AvailabilityTarget: target(90)}},
		{Name: "code", GPU: fleet.GPU{Models: []string{"A10G"}},
			Scaling: fleet.Scaling{Metric: fleet.MetricRequests, PerReplica: 2},
			Serving: fleet.Serving{AvailabilityTarget: target(75)}},
		{Name: "embed", GPU: fleet.GPU{Models: []string{"H100-80GB"}}, Scaling: fleet.Scaling{Metric: fleet.MetricTokens},
			Serving: fleet.Serving{PerReplica: map[string]float64{"H100-80GB": 100}}},
		{Name: "batch", GPU: fleet.GPU{Models: []string{"A10G"}}, Scaling: fleet.Scaling{Metric: fleet.MetricUtilization, PerReplica: 70}},
		{Name: "rag", GPU: fleet.GPU{Models: []string{"A10G"}}, Scaling: fleet.Scaling{Metric: fleet.MetricRequests, PerReplica: 1}},
	}
	return f
}

// capacityHistory is worked by hand in TestCapacityAvailability, over 10:00-10:10:
//
//	chat ready capacity (tokens/s): 1 H100 at aws-use1 since 09:50 and 1 A100 at gcp-usc1 from
//	  10:00: 1400; 2 A100s from 10:03:30: 1800; the H100 gone 10:05-10:07: 800; 1800 after.
//	  By minute (tokens): 84k, 84k, 84k, 96k (half each), 108k, 48k, 48k, 108k, 108k, 108k.
//	chat demand (prompt + generation increases): 10:00 60k (r1; its 10k at 09:59 is before the
//	  window), 10:01 90k (g1), 10:03 90k (r1), 10:05 80k (r1 restarted: 60k counted from zero, g1
//	  20k), 10:06 30k, 10:08 90k; r1's 250k at 10:10 is after it.
//	code (requests): 1 A10G from 10:02 (120 requests a minute), 2 from 10:06; 500 requests at
//	  10:01 (not observed), 130 at 10:04, 200 at 10:07, and tokens that are not its metric.
//	embed: 1 H100 and 1 A100 (no rate) from 10:00, no demand. batch: 1 A10G, by utilization.
func capacityHistory(t *testing.T) *store.Store {
	st := storetest.New(t)
	seedStates(t, st,
		groupReport{"09:50", "chat", "aws-use1", "aws", "spot", chatSpotA, "H100-80GB", 1, 1},
		groupReport{"10:00", "chat", "gcp-usc1", "gcp", "spot", chatGCP, "A100-80GB", 1, 2},
		groupReport{"10:00", "embed", "aws-use1", "aws", "spot", chatSpotA, "H100-80GB", 1, 1},
		groupReport{"10:00", "embed", "aws-use1", "aws", "spot", embedODA, "A100-80GB", 1, 1},
		groupReport{"10:00", "batch", "aws-use1", "aws", "spot", batchSpot, "A10G", 1, 1},
		groupReport{"10:02", "code", "aws-use1", "aws", "spot", codeSpot, "A10G", 1, 2},
		groupReport{"10:03:30", "chat", "gcp-usc1", "gcp", "spot", chatGCP, "A100-80GB", 2, 2},
		groupReport{"10:05", "chat", "aws-use1", "aws", "spot", chatSpotA, "H100-80GB", 0, 1},
		groupReport{"10:06", "code", "aws-use1", "aws", "spot", codeSpot, "A10G", 2, 2},
		groupReport{"10:07", "chat", "aws-use1", "aws", "spot", chatSpotA, "H100-80GB", 1, 1},
	)
	seedTokens(t, st,
		tokenSample{"09:58", "chat", "aws-use1", "r1", 0, 0, 0, false},
		tokenSample{"09:59:30", "chat", "aws-use1", "r1", 5_000, 5_000, 2, false},
		tokenSample{"10:00:30", "chat", "aws-use1", "r1", 55_000, 15_000, 6, false},
		tokenSample{"10:03:10", "chat", "aws-use1", "r1", 125_000, 35_000, 10, false},
		tokenSample{"10:05:20", "chat", "aws-use1", "r1", 40_000, 20_000, 3, true},
		tokenSample{"10:08", "chat", "aws-use1", "r1", 100_000, 50_000, 8, false},
		tokenSample{"10:10", "chat", "aws-use1", "r1", 300_000, 100_000, 20, false},
		tokenSample{"10:00", "chat", "gcp-usc1", "g1", 0, 0, 0, false},
		tokenSample{"10:01:30", "chat", "gcp-usc1", "g1", 60_000, 30_000, 4, false},
		tokenSample{"10:05:40", "chat", "gcp-usc1", "g1", 75_000, 35_000, 5, false},
		tokenSample{"10:06:30", "chat", "gcp-usc1", "g1", 95_000, 45_000, 7, false},
		tokenSample{"10:00", "code", "aws-use1", "c1", 0, 0, 0, false},
		tokenSample{"10:01:30", "code", "aws-use1", "c1", 1_000_000, 1_000_000, 500, false},
		tokenSample{"10:04:30", "code", "aws-use1", "c1", 2_000_000, 2_000_000, 630, false},
		tokenSample{"10:07:30", "code", "aws-use1", "c1", 3_000_000, 3_000_000, 830, false},
	)
	return st
}

var capacityCols = []string{"observed_min", "short_min", "available_pct_of_capacity", "unserved_pct",
	"availability_target_pct", "target_met"}

func TestCapacityAvailability(t *testing.T) {
	st := capacityHistory(t)
	with := func(since, until string, f Filter) AvailabilityOptions {
		o := opts(since, until, Workload)
		o.Fleet, o.Filter = capacityFleet(), f
		return AvailabilityOptions{Options: o, Target: CapacityTarget}
	}
	tests := []struct {
		name      string
		o         AvailabilityOptions
		want      []string
		wantNotes []string
	}{
		{
			// chat is short at 10:01 (90k > 84k) and 10:05 (80k > 48k), not at 10:03 (90k within
			// the minute's 96k): 8 of 10, 38k of 440k unserved, under its 90 %. code is observed
			// from 10:02, short at 10:04 (130 > 120): 7 of 8, 10 of 330 requests, over its 75 %.
			name: "by workload", o: with("10:00", "10:10", nil),
			want: []string{
				"chat observed_min=10 short_min=2 available_pct_of_capacity=80 unserved_pct=8.636 availability_target_pct=90 target_met=no",
				"code observed_min=8 short_min=1 available_pct_of_capacity=87.5 unserved_pct=3.03 availability_target_pct=75 target_met=yes",
				"embed observed_min=10 short_min=0 available_pct_of_capacity=100 unserved_pct=0 availability_target_pct=<nil> target_met=-",
			},
			wantNotes: []string{"embed: ready replicas on A100-80GB count as serving nothing",
				"not sized by throughput (no scaling.metric in tokens or requests with rates per replica), so not in the report: batch",
				"no replica.state report by the window's end, so not observed: rag"},
		},
		{
			// At gcp-usc1 alone chat has 1 A100 then 2 from 10:03:30: 24k tokens a minute against
			// 90k at 10:01 is its one short minute (66k of g1's 140k unserved): 90 %, its target.
			name: "one location", o: with("10:00", "10:10", Filter{Location: {"gcp-usc1"}, Workload: {"chat"}}),
			want: []string{
				"chat observed_min=10 short_min=1 available_pct_of_capacity=90 unserved_pct=47.143 availability_target_pct=90 target_met=yes",
			},
		},
		{
			// Whole minutes only: 10:00:30-10:03:45 counts 10:01 and 10:02.
			name: "a window off the minute grid", o: with("10:00:30", "10:03:45", Filter{Workload: {"chat"}}),
			want: []string{
				"chat observed_min=2 short_min=1 available_pct_of_capacity=50 unserved_pct=6.667 availability_target_pct=90 target_met=no",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Availability(ctxT(t), st, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if g := got(res, capacityCols...); strings.Join(g, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(g, "\n"), strings.Join(tt.want, "\n"))
			}
			notes := strings.Join(res.Notes, "\n")
			for _, n := range tt.wantNotes {
				if !strings.Contains(notes, n) {
					t.Errorf("notes lack %q:\n%s", n, notes)
				}
			}
		})
	}
}

func TestCapacityAvailabilityRefuses(t *testing.T) {
	st := capacityHistory(t)
	with := func(o Options) AvailabilityOptions { return AvailabilityOptions{Options: o, Target: CapacityTarget} }
	noFleet := opts("10:00", "10:10", Workload)
	noFleet.Fleet = nil
	byMarket := opts("10:00", "10:10", Workload)
	byMarket.Filter = Filter{Market: {"spot"}}
	tests := []struct {
		name    string
		o       AvailabilityOptions
		wantErr string
	}{
		{"without a fleet", with(noFleet), "give --fleet"},
		{"by location", with(opts("10:00", "10:10", Location)), "use it with --by workload"},
		{"by workload and location", with(opts("10:00", "10:10", Workload, Location)), "use it with --by workload"},
		{"by gpu", with(opts("10:00", "10:10", GPU)), "use it with --by workload"},
		{"filtered by market", with(byMarket), "token counters carry no market"},
		{"no whole minute", with(opts("10:00:10", "10:00:50", Workload)), "holds no whole minute"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Availability(ctxT(t), st, tt.o)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want one saying %q", err, tt.wantErr)
			}
		})
	}
	if _, err := ReadySteps(ctxT(t), st, with(opts("10:00", "10:10", Workload))); err == nil {
		t.Error("ReadySteps with --target capacity: no error")
	}
}

// TestTallyMinutes checks the minute grid on steps alone: a step inside a minute weighs by the
// time it holds, and a minute before the first step is not observed.
func TestTallyMinutes(t *testing.T) {
	const m = minuteMS
	tests := []struct {
		name   string
		steps  []capacityStep
		demand map[int64]float64
		want   capacityTally
	}{
		{"no steps", nil, map[int64]float64{0: 5}, capacityTally{}},
		{"first step mid-minute", []capacityStep{{m / 2, 1}}, map[int64]float64{0: 100, m: 60, 2 * m: 61},
			capacityTally{Observed: 2, Short: 1, Demand: 121, Unserved: 1}},
		{"a step inside a minute", []capacityStep{{0, 1}, {m / 4, 3}}, map[int64]float64{0: 150, m: 181},
			capacityTally{Observed: 3, Short: 1, Demand: 331, Unserved: 1}},
		{"no demand is available", []capacityStep{{0, 0}}, nil, capacityTally{Observed: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if g := tallyMinutes(tt.steps, tt.demand, 0, 3*m); g != tt.want {
				t.Errorf("got %+v, want %+v", g, tt.want)
			}
		})
	}
}

// TestCapacityAvailabilityOutputs: a workload without a target has an empty cell in CSV and null
// in JSON, not a zero that reads as a target.
func TestCapacityAvailabilityOutputs(t *testing.T) {
	st := capacityHistory(t)
	o := opts("10:00", "10:10", Workload)
	o.Fleet = capacityFleet()
	res, err := Availability(ctxT(t), st, AvailabilityOptions{Options: o, Target: CapacityTarget})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		format string
		want   []string
	}{
		{"csv", []string{"workload,observed_min,short_min,available_pct_of_capacity,unserved_pct,availability_target_pct,target_met\n",
			"chat,10,2,80,8.636,90,no\n", "embed,10,0,100,0,,-\n"}},
		{"json", []string{`"availability_target_pct":null`, `"target_met":"yes"`}},
		{"table", []string{"AVAILABLE_PCT_OF_CAPACITY", "note: available_pct_of_capacity: share of the observed minutes"}},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, tt.format, res, ""); err != nil {
				t.Fatal(err)
			}
			out := strings.ReplaceAll(b.String(), `": `, `":`)
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("%s lacks %q:\n%s", tt.format, w, out)
				}
			}
		})
	}
}
