package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/store/storetest"
)

// availabilityHistory is worked by hand in TestAvailability:
//
//	chat at aws-use1 (spot): 2 of 2 ready since 08:30; 1 of 2 at 09:30, 2 at 09:40, 0 at 11:00,
//	  2 at 11:15.
//	chat at gcp-usc1 (on-demand): first report 09:00 with 0 of 1 ready (a cold start), 1 of 1
//	  from 09:10.
//	batch at aws-use1 (spot): first report 10:00, 1 of 1; 1 of 2 at 10:30; 2 of 2 at 10:45.
func availabilityHistory(t *testing.T) *store.Store {
	st := storetest.New(t)
	seedStates(t, st,
		groupReport{"08:30", "chat", "aws-use1", "aws", "spot", chatSpotA, "H100-80GB", 2, 2},
		groupReport{"09:00", "chat", "gcp-usc1", "gcp", "on_demand", chatGCP, "A100-80GB", 0, 1},
		groupReport{"09:10", "chat", "gcp-usc1", "gcp", "on_demand", chatGCP, "A100-80GB", 1, 1},
		groupReport{"09:30", "chat", "aws-use1", "aws", "spot", chatSpotA, "H100-80GB", 1, 2},
		groupReport{"09:40", "chat", "aws-use1", "aws", "spot", chatSpotA, "H100-80GB", 2, 2},
		// The same report again (a redelivery) changes nothing.
		groupReport{"09:40", "chat", "aws-use1", "aws", "spot", chatSpotA, "H100-80GB", 2, 2},
		groupReport{"10:00", "batch", "aws-use1", "aws", "spot", batchSpotB, "A10G", 1, 1},
		groupReport{"10:20", "chat", "aws-use1", "aws", "spot", chatSpotA, "H100-80GB", 2, 2},
		groupReport{"10:30", "batch", "aws-use1", "aws", "spot", batchSpotB, "A10G", 1, 2},
		groupReport{"10:45", "batch", "aws-use1", "aws", "spot", batchSpotB, "A10G", 2, 2},
		groupReport{"11:00", "chat", "aws-use1", "aws", "spot", chatSpotA, "H100-80GB", 0, 2},
		groupReport{"11:15", "chat", "aws-use1", "aws", "spot", chatSpotA, "H100-80GB", 2, 2},
	)
	return st
}

var availabilityCols = []string{"observed_h", "available_pct", "downtime_min", "outages", "ready_replica_h",
	"desired_replica_h", "ready_share"}

func TestAvailability(t *testing.T) {
	st := availabilityHistory(t)
	minFleet := testFleet()
	minFleet.Workloads = []fleet.Workload{{Name: "chat", Replicas: fleet.Replicas{Min: 2}}, {Name: "batch", Replicas: fleet.Replicas{Min: 1}}}
	with := func(o Options, target string, f Filter) AvailabilityOptions {
		o.Filter = f
		if target == "min" {
			o.Fleet = minFleet
		}
		return AvailabilityOptions{Options: o, Target: target}
	}
	tests := []struct {
		name string
		o    AvailabilityOptions
		want []string
	}{
		{
			// chat: 3 of 3 desired but for 09:00-09:10 (gcp starting), 09:30-09:40 and 11:00-11:15:
			// 35 of 180 minutes down, in 3 outages. Ready replica-minutes 2x10 + 3x20 + 2x10 + 3x80 +
			// 1x15 + 3x45 = 490 of 3x180. batch from its first report at 10:00: down 10:30-10:45.
			name: "by workload", o: with(opts("09:00", "12:00", Workload), "", nil),
			want: []string{
				"batch observed_h=2 available_pct=87.5 downtime_min=15 outages=1 ready_replica_h=3.25 desired_replica_h=3.5 ready_share=0.9286",
				"chat observed_h=3 available_pct=80.56 downtime_min=35 outages=3 ready_replica_h=8.167 desired_replica_h=9 ready_share=0.9074",
			},
		},
		{
			// aws-use1: chat and batch together, down 09:30-09:40, 10:30-10:45, 11:00-11:15.
			name: "by location", o: with(opts("09:00", "12:00", Location), "desired", nil),
			want: []string{
				"aws-use1 observed_h=3 available_pct=77.78 downtime_min=40 outages=3 ready_replica_h=8.583 desired_replica_h=9.5 ready_share=0.9035",
				"gcp-usc1 observed_h=3 available_pct=94.44 downtime_min=10 outages=1 ready_replica_h=2.833 desired_replica_h=3 ready_share=0.9444",
			},
		},
		{
			name: "by provider, filtered", o: with(opts("09:00", "12:00", Provider), "", Filter{Provider: {"gcp"}}),
			want: []string{
				"gcp observed_h=3 available_pct=94.44 downtime_min=10 outages=1 ready_replica_h=2.833 desired_replica_h=3 ready_share=0.9444",
			},
		},
		{
			// chat needs 2 ready: only 11:00-11:15 (1 ready) is down. batch needs 1: always up.
			name: "target the fleet's minimum", o: with(opts("09:00", "12:00", Workload), "min", nil),
			want: []string{
				"batch observed_h=2 available_pct=100 downtime_min=0 outages=0 ready_replica_h=3.25 desired_replica_h=3.5 ready_share=0.9286",
				"chat observed_h=3 available_pct=91.67 downtime_min=15 outages=1 ready_replica_h=8.167 desired_replica_h=9 ready_share=0.9074",
			},
		},
		{
			name: "a fixed target", o: with(opts("09:00", "12:00", Workload), "3", nil),
			want: []string{
				"batch observed_h=2 available_pct=0 downtime_min=120 outages=1 ready_replica_h=3.25 desired_replica_h=3.5 ready_share=0.9286",
				"chat observed_h=3 available_pct=80.56 downtime_min=35 outages=3 ready_replica_h=8.167 desired_replica_h=9 ready_share=0.9074",
			},
		},
		{
			// At 12:30 the window 10:00-13:00 is observed to 12:30: 3 ready from 10:00 but
			// 11:00-11:15 (1 ready).
			name: "window past now", o: with(opts("10:00", "13:00", Workload), "", Filter{Workload: {"chat"}}),
			want: []string{
				"chat observed_h=2.5 available_pct=90 downtime_min=15 outages=1 ready_replica_h=7 desired_replica_h=7.5 ready_share=0.9333",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Availability(ctxT(t), st, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			// The header names the target: available_pct_of_desired by default.
			col := map[string]string{"": "available_pct_of_desired", "desired": "available_pct_of_desired",
				"min": "available_pct_of_min", "3": "available_pct_of_3"}[tt.o.Target]
			if !slices.Contains(res.Columns, col) {
				t.Fatalf("columns %v lack %s", res.Columns, col)
			}
			cols := slices.Clone(availabilityCols)
			cols[slices.Index(cols, "available_pct")] = col
			g := strings.Split(strings.ReplaceAll(strings.Join(got(res, cols...), "\n"), col+"=", "available_pct="), "\n")
			if strings.Join(g, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(g, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestReadySteps(t *testing.T) {
	st := availabilityHistory(t)
	steps, err := ReadySteps(ctxT(t), st, AvailabilityOptions{Options: opts("09:00", "12:00", Workload)})
	if err != nil {
		t.Fatal(err)
	}
	var g []string
	for _, s := range steps {
		g = append(g, fmt.Sprintf("%s %s %d/%d", s.Group[0], s.At.Format("15:04"), s.Ready, s.Desired))
	}
	// Reports that change nothing (chat at 10:20, the repeated 09:40) make no step.
	want := []string{"batch 10:00 1/1", "batch 10:30 1/2", "batch 10:45 2/2",
		"chat 09:00 2/3", "chat 09:10 3/3", "chat 09:30 2/3", "chat 09:40 3/3", "chat 11:00 1/3", "chat 11:15 3/3"}
	if strings.Join(g, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(g, "\n"), strings.Join(want, "\n"))
	}
}

func TestAvailabilityRefuses(t *testing.T) {
	st := availabilityHistory(t)
	tests := []struct {
		name    string
		o       AvailabilityOptions
		wantErr string
	}{
		{"by gpu", AvailabilityOptions{Options: opts("09:00", "12:00", GPU)}, "not by GPU model"},
		{"min by location", AvailabilityOptions{Options: opts("09:00", "12:00", Location), Target: "min"}, "--by workload"},
		{"min without a fleet", AvailabilityOptions{Options: Options{Window: opts("09:00", "12:00").Window, By: []Dim{Workload}}, Target: "min"}, "--fleet"},
		{"bad target", AvailabilityOptions{Options: opts("09:00", "12:00", Workload), Target: "most"}, "want desired, min, capacity or a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Availability(ctxT(t), st, tt.o)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want one saying %q", err, tt.wantErr)
			}
		})
	}
}

func TestAvailabilityOutputs(t *testing.T) {
	st := availabilityHistory(t)
	res, err := Availability(ctxT(t), st, AvailabilityOptions{Options: opts("09:00", "12:00", Workload)})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		format string
		want   []string
	}{
		{"table", []string{"WORKLOAD", "AVAILABLE_PCT_OF_DESIRED", "chat", "80.56", "note: available_pct_of_desired: share of the observed time with at least the target ready"}},
		{"csv", []string{"workload,observed_h,available_pct_of_desired,downtime_min,outages,ready_replica_h,desired_replica_h,ready_share",
			"chat,3,80.56,35,3,8.167,9,0.9074"}},
		{"markdown", []string{"## Availability, ", "| workload | observed_h | available_pct_of_desired |", "| chat | 3 | 80.56 | 35 | 3 |"}},
		{"json", []string{`"available_pct_of_desired":80.56`, `"outages":3`}},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, tt.format, res, ""); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if tt.format == "json" {
				var rows []map[string]any
				if err := json.Unmarshal(b.Bytes(), &rows); err != nil {
					t.Fatal(err)
				}
				out = strings.ReplaceAll(out, " ", "")
			}
			if tt.format == "csv" {
				if _, err := csv.NewReader(strings.NewReader(out)).ReadAll(); err != nil {
					t.Error(err)
				}
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("%s lacks %q:\n%s", tt.format, w, out)
				}
			}
		})
	}
}
