package report

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/store"
)

// giveUp is a launch the arbiter gave up, announced at at (proposed) and applied a few seconds on,
// as the arbiter announces it: kind retire, reason launch_failed.
type giveUp struct {
	at, workload, action, location, offer, market string
}

func seedGiveUps(t *testing.T, st *store.Store, gs ...giveUp) {
	t.Helper()
	var rows [][]any
	for i, g := range gs {
		for j, status := range []string{"proposed", "applied"} {
			rows = append(rows, []any{fmt.Sprintf("g%d-%d", i, j), at(g.at).Add(time.Duration(2*j) * time.Second), "1", g.workload, g.action, "p", status,
				"retire", g.location, g.offer, g.market, 0, "launch_failed", "arbiter", "given up"})
		}
	}
	// A retire for a reclaim is no launch failure.
	rows = append(rows, []any{"gr", at("10:05"), "1", "chat", "R9", "p", "proposed", "retire", "aws-use1", chatSpotA, "spot", 0,
		"reclaim", "arbiter", ""})
	seed(t, st, "action_updated", "id, at, version, workload, action_id, plan_id, status, kind, location, offer, market, "+
		"replicas, reason, actor, detail", rows...)
}

// The give-ups of reclaimHistory's morning: two of chat's spot launches in aws-use1 zone a (10:03,
// 10:04), one of batch's in zone b (11:28), one of chat's at gcp-usc1 after the window (12:10).
var morningGiveUps = []giveUp{
	{"10:03", "chat", "G1", "aws-use1", chatSpotA, "spot"},
	{"10:04", "chat", "G2", "aws-use1", chatSpotA, "spot"},
	{"11:28", "batch", "G3", "aws-use1", batchSpotB, "spot"},
	{"12:10", "chat", "G4", "gcp-usc1", chatGCP, "spot"},
}

func TestReclaimsCountLaunchFailures(t *testing.T) {
	st := reclaimHistory(t)
	seedGiveUps(t, st, morningGiveUps...)
	cols := append(slices.Clone(reclaimCols), "launches_failed")
	tests := []struct {
		name     string
		o        Options
		want     []string // rows with launches_failed > 0, or all rows with --by
		wantNote string
	}{
		{
			name: "detail: rows of their own kind", o: opts("09:00", "12:00"),
			want: []string{
				"aws aws-use1 us-east-1a H100-80GB launch_failed reclaims=0 avg_notice_s=0 replaced=0 replaced_by_deadline=0 " +
					"avg_to_replacement_s=0 median_to_replacement_s=0 launches=0 avg_to_first_gpu_s=0 launches_failed=2",
				"aws aws-use1 us-east-1b A10G launch_failed reclaims=0 avg_notice_s=0 replaced=0 replaced_by_deadline=0 " +
					"avg_to_replacement_s=0 median_to_replacement_s=0 launches=0 avg_to_first_gpu_s=0 launches_failed=1",
			},
			wantNote: "3 launches given up (no capacity, or not ready within the launch timeout): rows of kind launch_failed",
		},
		{
			name: "by provider: a column", o: opts("09:00", "12:00", Provider),
			want: []string{
				"aws reclaims=3 avg_notice_s=120 replaced=3 replaced_by_deadline=1 avg_to_replacement_s=240 " +
					"median_to_replacement_s=300 launches=3 avg_to_first_gpu_s=258.3 launches_failed=3",
				"gcp reclaims=2 avg_notice_s=30 replaced=1 replaced_by_deadline=0 avg_to_replacement_s=240 " +
					"median_to_replacement_s=240 launches=0 avg_to_first_gpu_s=0 launches_failed=0",
			},
			wantNote: "3 launches given up (no capacity, or not ready within the launch timeout): column launches_failed",
		},
		{
			name: "by workload, filtered to a GPU", o: func() Options {
				o := opts("09:00", "12:30", Workload)
				o.Filter = Filter{GPU: {"A100-80GB"}}
				return o
			}(),
			want: []string{
				"chat reclaims=1 avg_notice_s=30 replaced=1 replaced_by_deadline=0 avg_to_replacement_s=240 " +
					"median_to_replacement_s=240 launches=0 avg_to_first_gpu_s=0 launches_failed=1",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Reclaims(ctxT(t), st, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			g := got(res, cols...)
			if len(tt.o.By) == 0 {
				g = slices.DeleteFunc(g, func(r string) bool { return strings.HasSuffix(r, "launches_failed=0") })
			}
			if strings.Join(g, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(g, "\n"), strings.Join(tt.want, "\n"))
			}
			if tt.wantNote != "" && !slices.Contains(res.Notes, tt.wantNote) {
				t.Errorf("notes = %q, want %q among them", res.Notes, tt.wantNote)
			}
		})
	}
}

func TestAvailabilityCountsLaunchFailures(t *testing.T) {
	st := availabilityHistory(t)
	seedGiveUps(t, st,
		giveUp{"10:31", "batch", "G1", "aws-use1", batchSpotB, "spot"},
		giveUp{"11:01", "chat", "G2", "aws-use1", chatSpotA, "spot"},
		giveUp{"11:02", "chat", "G3", "aws-use1", chatSpotA, "spot"},
		giveUp{"11:03", "summarize", "G4", "aws-use1", chatSpotA, "spot"}, // never reported: in no row
		giveUp{"08:00", "chat", "G5", "aws-use1", chatSpotA, "spot"},      // before the window
	)
	tests := []struct {
		name      string
		by        []Dim
		want      []string
		wantNotes []string
	}{
		{"by workload", []Dim{Workload}, []string{"batch launches_failed=1", "chat launches_failed=2"},
			[]string{"1 of them in groups with no replica.state report in the window, so in no row"}},
		{"by location", []Dim{Location}, []string{"aws-use1 launches_failed=4", "gcp-usc1 launches_failed=0"}, nil},
		{"by provider and market", []Dim{Provider, Market}, []string{"aws spot launches_failed=4", "gcp on_demand launches_failed=0"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Availability(ctxT(t), st, AvailabilityOptions{Options: opts("09:00", "12:00", tt.by...)})
			if err != nil {
				t.Fatal(err)
			}
			if g := got(res, "launches_failed"); strings.Join(g, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(g, "\n"), strings.Join(tt.want, "\n"))
			}
			for _, n := range tt.wantNotes {
				if !slices.Contains(res.Notes, n) {
					t.Errorf("notes = %q, want %q among them", res.Notes, n)
				}
			}
		})
	}
}

// The dashboard's launch-failure table reads the same rows as report reclaims: per location and
// zone they agree.
func TestDashboardLaunchFailuresMatchReport(t *testing.T) {
	st := reclaimHistory(t)
	seedGiveUps(t, st, morningGiveUps...)
	sql := panelSQL(t, "Launches given up (no capacity, or not ready in time) by location and zone")
	rows, err := queryRows[struct {
		Location string `json:"location"`
		Zone     string `json:"zone"`
		N        int64  `json:"launches_failed"`
	}](ctxT(t), st, expand(sql, st.Database(), at("09:00").Unix(), at("11:59:59").Unix()))
	if err != nil {
		t.Fatal(err)
	}
	dash := map[string]int64{}
	for _, r := range rows {
		dash[r.Location+" "+r.Zone] = r.N
	}
	res, err := Reclaims(ctxT(t), st, opts("09:00", "12:00"))
	if err != nil {
		t.Fatal(err)
	}
	rep := map[string]int64{}
	for _, r := range res.Rows {
		if n := r["launches_failed"].(int); n > 0 {
			rep[fmt.Sprint(r["location"], " ", r["zone"])] = int64(n)
		}
	}
	if want := map[string]int64{"aws-use1 us-east-1a": 2, "aws-use1 us-east-1b": 1}; fmt.Sprint(rep) != fmt.Sprint(want) || fmt.Sprint(dash) != fmt.Sprint(want) {
		t.Errorf("dashboard %v, report %v, want both %v", dash, rep, want)
	}
}

// panelSQL is the query of the dashboard panel titled title.
func panelSQL(t *testing.T, title string) string {
	t.Helper()
	for _, file := range dashboardFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var d grafanaDashboard
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatal(err)
		}
		for _, p := range d.Panels {
			if p.Title == title && len(p.Targets) > 0 {
				return p.Targets[0].RawSQL
			}
		}
	}
	t.Fatalf("no dashboard panel %q", title)
	return ""
}
