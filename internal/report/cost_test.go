package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/store/storetest"
)

// got renders each row as its string columns (the dimensions; basis only when asked for among
// cols) and then cols as name=value.
func got(res *Result, cols ...string) []string {
	var out []string
	for _, r := range res.Rows {
		var b strings.Builder
		for _, c := range res.Columns {
			if !slices.Contains(cols, c) && c != "basis" {
				if s, ok := r[c].(string); ok {
					b.WriteString(s + " ")
				}
			}
		}
		for _, c := range cols {
			fmt.Fprintf(&b, "%s=%v ", c, r[c])
		}
		out = append(out, strings.TrimSpace(b.String()))
	}
	return out
}

func TestCost(t *testing.T) {
	st := history(t)
	tests := []struct {
		name string
		o    Options
		want []string
	}{
		{
			// aws: 2 x $4 x 1.5h + 2 x $5 x 1.5h; 2 replicas x 2 GPUs x 3h. gcp: 1 x $3 x 3h, the last
			// hour from the interval still open after 11:00.
			name: "whole hours", o: opts("09:00", "12:00", Location),
			want: []string{
				"aws-use1 usd=27 gpu_hours=12 usd_per_gpu_hour=2.25 spot_share=1 on_demand_share=0",
				"gcp-usc1 usd=9 gpu_hours=3 usd_per_gpu_hour=3 spot_share=0 on_demand_share=1",
			},
		},
		{
			// aws: 2 x $4 x 1h (09:30-10:30) + 2 x $5 x 0.75h; gcp: 1 x $3 x 1.75h.
			name: "edges inside hours", o: opts("09:30", "11:15", Location),
			want: []string{
				"aws-use1 usd=15.5 gpu_hours=7 usd_per_gpu_hour=2.2143 spot_share=1 on_demand_share=0",
				"gcp-usc1 usd=5.25 gpu_hours=1.75 usd_per_gpu_hour=3 spot_share=0 on_demand_share=1",
			},
		},
		{
			// The report runs at 12:30, but the fleet was last heard from at 12:00: open
			// intervals count up to then, not to the report's time nor to 13:00.
			// spot: 2 x $4 x 0.5h + 2 x $5 x 1.5h; on-demand: 1 x $3 x 2h.
			name: "window past now", o: opts("10:00", "13:00", Market),
			want: []string{
				"on_demand usd=6 gpu_hours=2 usd_per_gpu_hour=3 spot_share=0 on_demand_share=1",
				"spot usd=19 gpu_hours=8 usd_per_gpu_hour=2.375 spot_share=1 on_demand_share=0",
			},
		},
		{
			name: "inside one hour", o: opts("10:15", "10:45", Provider, GPU),
			want: []string{
				// 2 x $4 x 0.25h + 2 x $5 x 0.25h
				"aws H100-80GB usd=4.5 gpu_hours=2 usd_per_gpu_hour=2.25 spot_share=1 on_demand_share=0",
				"gcp A100-80GB usd=1.5 gpu_hours=0.5 usd_per_gpu_hour=3 spot_share=0 on_demand_share=1",
			},
		},
		{
			name: "by region", o: opts("09:00", "12:00", Region),
			want: []string{
				"us-central1 usd=9 gpu_hours=3 usd_per_gpu_hour=3 spot_share=0 on_demand_share=1",
				"us-east-1 usd=27 gpu_hours=12 usd_per_gpu_hour=2.25 spot_share=1 on_demand_share=0",
			},
		},
		{
			name: "filtered", o: func() Options {
				o := opts("09:00", "12:00", Workload)
				o.Filter = Filter{Provider: {"gcp"}}
				return o
			}(),
			want: []string{"chat usd=9 gpu_hours=3 usd_per_gpu_hour=3 spot_share=0 on_demand_share=1"},
		},
		{
			name: "region filter", o: func() Options {
				o := opts("09:00", "12:00", Workload)
				o.Filter = Filter{Region: {"us-east-1"}}
				return o
			}(),
			want: []string{"chat usd=27 gpu_hours=12 usd_per_gpu_hour=2.25 spot_share=1 on_demand_share=0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Cost(ctxT(t), st, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			g := got(res, "usd", "gpu_hours", "usd_per_gpu_hour", "spot_share", "on_demand_share")
			if strings.Join(g, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(g, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestCostOutputs(t *testing.T) {
	st := history(t)
	res, err := Cost(ctxT(t), st, opts("09:00", "12:00", Location))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, format string
		check        func(t *testing.T, out string)
	}{
		{"table", "table", func(t *testing.T, out string) {
			for _, want := range []string{"LOCATION", "aws-use1", "27", "TOTAL", "36"} {
				if !strings.Contains(out, want) {
					t.Errorf("table lacks %q:\n%s", want, out)
				}
			}
		}},
		{"json", "json", func(t *testing.T, out string) {
			var rows []map[string]any
			if err := json.Unmarshal([]byte(out), &rows); err != nil {
				t.Fatal(err)
			}
			if len(rows) != 2 || rows[0]["usd"] != 27.0 || rows[1]["gpu_hours"] != 3.0 {
				t.Errorf("json rows = %v", rows)
			}
		}},
		{"csv", "csv", func(t *testing.T, out string) {
			recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 3 || recs[0][1] != "usd" || recs[1][0] != "aws-use1" || recs[1][1] != "27" {
				t.Errorf("csv = %q", recs)
			}
		}},
		{"markdown", "markdown", func(t *testing.T, out string) {
			for _, want := range []string{"## Cost, 2026-11-30T09:00:00Z to 2026-11-30T12:00:00Z", "![", "(cost.png)",
				"| location | usd |", "| aws-use1 | 27 | 12 | 2.25 |", "| TOTAL | 36 |"} {
				if !strings.Contains(out, want) {
					t.Errorf("markdown lacks %q:\n%s", want, out)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, tt.format, res, "cost.png"); err != nil {
				t.Fatal(err)
			}
			tt.check(t, b.String())
		})
	}
	if err := Write(&bytes.Buffer{}, "xml", res, ""); err == nil {
		t.Error("an unknown format is accepted")
	}
}

func TestChartDecodes(t *testing.T) {
	st := history(t)
	res, err := Cost(ctxT(t), st, opts("09:00", "12:00", Location))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Series.Lines); n != 2 {
		t.Fatalf("%d lines, want one per location", n)
	}
	if got := res.Series.Lines[0]; got.Name != "aws-use1" || fmt.Sprint(got.Values) != "[8 9 10]" {
		t.Errorf("aws line = %+v, want hourly spend [8 9 10]", got)
	}
	path := filepath.Join(t.TempDir(), "cost.png")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Series.RenderPNG(f, res.Title); err != nil {
		t.Fatal(err)
	}
	f.Close()
	f, _ = os.Open(path)
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("the chart is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 400 || b.Dy() < 200 {
		t.Errorf("chart is %v", b)
	}
}

// A group runs one offer at a time. When it moves to another offer in the same location and
// market, the old offer's series stops with a sample that still says ready; only the new offer
// is running now, and it alone has an interval open.
func TestCostAfterAGroupMovesOffer(t *testing.T) {
	st := storetest.New(t)
	const h100 = "aws-use1/us-east-1a/p5.48xlarge/spot"
	const a100 = "aws-use1/us-east-1b/p4d.24xlarge/spot"
	seedReplicas(t, st,
		replicaSample{"09:00", "chat", "aws-use1", "aws", "spot", h100, "H100-80GB", 1, 2, 4},
		replicaSample{"10:00", "chat", "aws-use1", "aws", "spot", h100, "H100-80GB", 1, 2, 4},
		replicaSample{"10:00", "chat", "aws-use1", "aws", "spot", a100, "A100-80GB", 1, 2, 3},
		replicaSample{"11:00", "chat", "aws-use1", "aws", "spot", a100, "A100-80GB", 1, 2, 3},
		// Another group, with nothing ready, says the fleet was still heard from at 12:30.
		replicaSample{"12:30", "batch", "aws-use1", "aws", "spot", h100, "H100-80GB", 1, 0, 4},
	)
	tests := []struct {
		name   string
		filter Filter
		want   string
	}{
		// H100 2 x $4 x 1h (09:00-10:00); A100 2 x $3 x 1h closed + 2 x $3 x 1.5h open to 12:30.
		{name: "all", want: "chat usd=23 gpu_hours=7"},
		// The open interval is the A100's: filtering on the H100 leaves only its closed hour.
		{name: "filtered on the old offer's GPU", filter: Filter{GPU: {"H100-80GB"}}, want: "chat usd=8 gpu_hours=2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := opts("09:00", "13:00", Workload)
			o.Filter = tt.filter
			res, err := Cost(ctxT(t), st, o)
			if err != nil {
				t.Fatal(err)
			}
			if g := strings.Join(got(res, "usd", "gpu_hours"), "\n"); g != tt.want {
				t.Errorf("got %s, want %s", g, tt.want)
			}
		})
	}
}

// TestCostStopsWhereTheHistoryStops checks that a series' open interval ends where the fleet was
// last heard from (12:00 in the known history), not at the report's time: a report over a
// history that ended gives the same figures however late it is run.
func TestCostStopsWhereTheHistoryStops(t *testing.T) {
	st := history(t)
	var runs []string
	for _, now := range []string{"12:30", "18:00", "23:00"} {
		o := opts("09:00", "23:59", Location)
		o.Now = at(now)
		res, err := Cost(ctxT(t), st, o)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, strings.Join(got(res, "usd", "gpu_hours"), "\n"))
	}
	// aws: 2 x $4 x 1.5h + 2 x $5 x 1.5h; gcp: $3 x 3h (11:00-12:00 open, to the last report).
	want := "aws-use1 usd=27 gpu_hours=12\ngcp-usc1 usd=9 gpu_hours=3"
	for i, g := range runs {
		if g != want {
			t.Errorf("run %d: got\n%s\nwant\n%s", i, g, want)
		}
	}
}

// TestCostByTeam checks that --by team and --filter team=… group and keep spend by the team the
// fleet file gives each workload.
func TestCostByTeam(t *testing.T) {
	st := history(t)
	seedReplicas(t, st, replicaSample{"09:00", "batch", "aws-use1", "aws", "spot", awsSpot, "H100-80GB", 1, 1, 2},
		replicaSample{"11:00", "batch", "aws-use1", "aws", "spot", awsSpot, "H100-80GB", 1, 0, 2})
	o := opts("09:00", "12:00", Team)
	o.Fleet.Workloads = []fleet.Workload{{Name: "chat", Team: "search"}, {Name: "batch", Team: "research"}}
	res, err := Cost(ctxT(t), st, o)
	if err != nil {
		t.Fatal(err)
	}
	// research: batch 1 x $2 x 2h; search: chat $27 + $9.
	want := "research usd=4 gpu_hours=2\nsearch usd=36 gpu_hours=15"
	if g := strings.Join(got(res, "usd", "gpu_hours"), "\n"); g != want {
		t.Errorf("by team: got\n%s\nwant\n%s", g, want)
	}
	o.By, o.Filter = []Dim{Workload}, Filter{Team: {"research"}}
	if res, err = Cost(ctxT(t), st, o); err != nil {
		t.Fatal(err)
	}
	if g := strings.Join(got(res, "usd"), "\n"); g != "batch usd=4" {
		t.Errorf("filtered on team research: got %s, want batch usd=4", g)
	}
	if _, err := ParseDims("workload,team"); err != nil {
		t.Errorf("--by workload,team: %v", err)
	}
	if why := (Options{By: []Dim{Team}}).NeedsFleet(); !strings.Contains(why, "--fleet") {
		t.Errorf("team without a fleet file: %q, want a hint to give --fleet", why)
	}
}
