package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/store/storetest"
)

// groupReport is one replica.state report of one offer, with desired given apart from ready.
type groupReport struct {
	at                                   string
	workload, location, provider, market string
	offer, gpu                           string
	ready, desired                       int
}

// seedStates writes replica.state rows (1 GPU at $1 a replica-hour) with the interval each
// closes, as the recorder does.
func seedStates(t *testing.T, st *store.Store, reports ...groupReport) {
	t.Helper()
	type last struct {
		at    time.Time
		ready int
	}
	prev := map[string]last{}
	var rows [][]any
	for i, r := range reports {
		k := r.workload + "|" + r.location + "|" + r.market + "|" + r.offer
		now := at(r.at)
		p, ok := prev[k]
		if !ok {
			p = last{now, 0}
		}
		prev[k] = last{now, r.ready}
		rows = append(rows, []any{fmt.Sprintf("gs%d", i), now, "1", r.workload, r.location, r.provider, r.market, r.offer,
			r.gpu, 1, 1.0, r.desired, r.ready, p.at, p.ready, 1.0})
	}
	seed(t, st, "replica_state", "id, at, version, workload, location, provider, market, offer, gpu_model, "+
		"gpus_per_replica, usd_per_hour, desired, ready, prev_at, prev_ready, prev_usd_per_hour", rows...)
}

// step is one action.updated status.
type step struct {
	at, workload, action, status, kind, location, offer, market string
	replicas                                                    int
}

func seedActions(t *testing.T, st *store.Store, steps ...step) {
	t.Helper()
	var rows [][]any
	for i, s := range steps {
		rows = append(rows, []any{fmt.Sprintf("a%d", i), at(s.at), "1", s.workload, s.action, "p", s.status, s.kind,
			s.location, s.offer, s.market, s.replicas, "", "arbiter", ""})
	}
	seed(t, st, "action_updated", "id, at, version, workload, action_id, plan_id, status, kind, location, offer, market, "+
		"replicas, reason, actor, detail", rows...)
}

const (
	chatSpotA  = "aws-use1/us-east-1a/p5.48xlarge/spot"
	chatODA    = "aws-use1/us-east-1a/p5e.48xlarge/on_demand"
	batchSpotB = "aws-use1/us-east-1b/g5.xlarge/spot"
	chatGCP    = "gcp-usc1/us-central1-a/a2-highgpu-1g/spot"
	chatUSW2   = "aws-usw2/-/p5.48xlarge/on_demand"
)

// reclaimHistory is a morning of reclaims, worked by hand in TestReclaims:
//
//	c1 10:00 and c3 10:01, aws-use1 zone a, 2 min notice: both chat spot H100s there (an on-demand
//	  H200 of chat runs in the same zone, and a spot A10G of batch in zone b). Both go at 10:02;
//	  one report at 10:06 shows both replacements ready: 360 s and 300 s.
//	c2 11:00, gcp-usc1 zone a, 30 s notice: chat's spot A100. Replaced by chat's on-demand
//	  replica at aws-usw2, ready at 11:04: 240 s, after the deadline.
//	c4 11:30, aws-use1 zone b, 2 min notice: batch's A10G; a hedge ready at 11:31: 60 s, in time.
//	c5 09:30, gcp-usc1 zone b, where nothing ran: GPU unknown, never replaced.
//
// Launches: L1 chat aws-use1 spot asked 10:00:05, first ready 10:06 (355 s); L2 chat aws-usw2
// on-demand proposed 11:00:05 but approved 11:01:00, ready 11:04 (180 s); L3 batch asked 10:30,
// withdrawn by a drain at 10:40, so the 11:31 arrival is not its; L4 batch asked 11:27, ready
// 11:31 (240 s).
func reclaimHistory(t *testing.T) *store.Store {
	st := storetest.New(t)
	seedStates(t, st,
		groupReport{"09:00", "chat", "aws-use1", "aws", "spot", chatSpotA, "H100-80GB", 2, 2},
		groupReport{"09:00", "chat", "aws-use1", "aws", "on_demand", chatODA, "H200", 1, 1},
		groupReport{"09:00", "batch", "aws-use1", "aws", "spot", batchSpotB, "A10G", 1, 1},
		groupReport{"09:00", "chat", "gcp-usc1", "gcp", "spot", chatGCP, "A100-80GB", 1, 1},
		groupReport{"09:00", "chat", "aws-usw2", "aws", "on_demand", chatUSW2, "H100-80GB", 0, 0},
		groupReport{"10:02", "chat", "aws-use1", "aws", "spot", chatSpotA, "H100-80GB", 0, 2},
		groupReport{"10:06", "chat", "aws-use1", "aws", "spot", chatSpotA, "H100-80GB", 2, 2},
		groupReport{"10:30", "batch", "aws-use1", "aws", "spot", batchSpotB, "A10G", 1, 3},
		groupReport{"10:40", "batch", "aws-use1", "aws", "spot", batchSpotB, "A10G", 1, 1},
		groupReport{"11:00:30", "chat", "gcp-usc1", "gcp", "spot", chatGCP, "A100-80GB", 0, 0},
		groupReport{"11:01:30", "chat", "aws-usw2", "aws", "on_demand", chatUSW2, "H100-80GB", 0, 1},
		groupReport{"11:04", "chat", "aws-usw2", "aws", "on_demand", chatUSW2, "H100-80GB", 1, 1},
		groupReport{"11:31", "batch", "aws-use1", "aws", "spot", batchSpotB, "A10G", 2, 2},
	)
	seed(t, st, "capacity_reclaimed", "id, at, version, provider, region, location, zone, instance, node, kind, notice_at, deadline, source",
		[]any{"c1", at("10:00"), "1", "aws", "us-east-1", "aws-use1", "us-east-1a", "i-1", "n1", "interruption", at("10:00"), at("10:02"), "imds"},
		[]any{"c3", at("10:01"), "1", "aws", "us-east-1", "aws-use1", "us-east-1a", "i-2", "n2", "interruption", at("10:01"), at("10:03"), "imds"},
		[]any{"c2", at("11:00"), "1", "gcp", "us-central1", "gcp-usc1", "us-central1-a", "vm-1", "n3", "preempted", at("11:00"), at("11:00:30"), "gce"},
		[]any{"c4", at("11:30"), "1", "aws", "us-east-1", "aws-use1", "us-east-1b", "i-3", "n4", "interruption", at("11:30"), at("11:32"), "imds"},
		[]any{"c5", at("09:30"), "1", "gcp", "us-central1", "gcp-usc1", "us-central1-b", "vm-2", "n5", "preempted", at("09:30"), at("09:30:30"), "gce"},
		// A redelivered notice is one reclaim.
		[]any{"c1", at("10:00"), "1", "aws", "us-east-1", "aws-use1", "us-east-1a", "i-1", "n1", "interruption", at("10:00"), at("10:02"), "imds"},
	)
	seedActions(t, st,
		step{"10:00:05", "chat", "L1", "proposed", "launch", "aws-use1", chatSpotA, "spot", 2},
		step{"10:00:08", "chat", "L1", "applied", "launch", "aws-use1", chatSpotA, "spot", 2},
		step{"10:02:10", "chat", "R1", "proposed", "retire", "aws-use1", chatSpotA, "spot", 0},
		step{"10:02:11", "chat", "R1", "applied", "retire", "aws-use1", chatSpotA, "spot", 0},
		step{"10:30", "batch", "L3", "proposed", "launch", "aws-use1", batchSpotB, "spot", 3},
		step{"10:30:02", "batch", "L3", "applied", "launch", "aws-use1", batchSpotB, "spot", 3},
		step{"10:40", "batch", "D3", "proposed", "drain", "aws-use1", batchSpotB, "spot", 1},
		step{"10:40:02", "batch", "D3", "applied", "drain", "aws-use1", batchSpotB, "spot", 1},
		step{"11:00:05", "chat", "L2", "proposed", "launch", "aws-usw2", chatUSW2, "on_demand", 1},
		step{"11:00:05", "chat", "L2", "awaiting_approval", "launch", "aws-usw2", chatUSW2, "on_demand", 1},
		step{"11:01:00", "chat", "L2", "approved", "launch", "aws-usw2", chatUSW2, "on_demand", 1},
		step{"11:01:02", "chat", "L2", "applied", "launch", "aws-usw2", chatUSW2, "on_demand", 1},
		step{"11:27", "batch", "L4", "proposed", "launch", "aws-use1", batchSpotB, "spot", 2},
		step{"11:27:01", "batch", "L4", "applied", "launch", "aws-use1", batchSpotB, "spot", 2},
		// Proposed but never applied: no capacity was asked for.
		step{"11:40", "chat", "L5", "proposed", "launch", "aws-use1", chatSpotA, "spot", 3},
	)
	return st
}

var reclaimCols = []string{"reclaims", "avg_notice_s", "replaced", "replaced_by_deadline", "avg_to_replacement_s",
	"median_to_replacement_s", "launches", "avg_to_first_gpu_s"}

func TestReclaims(t *testing.T) {
	st := reclaimHistory(t)
	tests := []struct {
		name      string
		o         Options
		want      []string
		wantNotes []string
	}{
		{
			name: "detail", o: opts("09:00", "12:00"),
			want: []string{
				"aws aws-use1 us-east-1a H100-80GB interruption reclaims=2 avg_notice_s=120 replaced=2 replaced_by_deadline=0 " +
					"avg_to_replacement_s=330 median_to_replacement_s=330 launches=1 avg_to_first_gpu_s=355",
				"aws aws-use1 us-east-1b A10G interruption reclaims=1 avg_notice_s=120 replaced=1 replaced_by_deadline=1 " +
					"avg_to_replacement_s=60 median_to_replacement_s=60 launches=1 avg_to_first_gpu_s=240",
				"gcp gcp-usc1 us-central1-a A100-80GB preempted reclaims=1 avg_notice_s=30 replaced=1 replaced_by_deadline=0 " +
					"avg_to_replacement_s=240 median_to_replacement_s=240 launches=0 avg_to_first_gpu_s=0",
				"gcp gcp-usc1 us-central1-b unknown preempted reclaims=1 avg_notice_s=30 replaced=0 replaced_by_deadline=0 " +
					"avg_to_replacement_s=0 median_to_replacement_s=0 launches=0 avg_to_first_gpu_s=0",
			},
			wantNotes: []string{
				// (355 + 180 + 240) / 3
				"time to first GPU at aws: 258.3 s on average over 3 launches (capacity request to replica ready)",
				"1 reclaims struck where replica.state shows nothing ready at the notice: GPU unknown, not matched to a replacement",
			},
		},
		{
			// L2 (aws-usw2, on-demand H100) joins the H100 row: (355 + 180) / 2.
			name: "by gpu", o: opts("09:00", "12:00", GPU),
			want: []string{
				"A100-80GB reclaims=1 avg_notice_s=30 replaced=1 replaced_by_deadline=0 avg_to_replacement_s=240 " +
					"median_to_replacement_s=240 launches=0 avg_to_first_gpu_s=0",
				"A10G reclaims=1 avg_notice_s=120 replaced=1 replaced_by_deadline=1 avg_to_replacement_s=60 " +
					"median_to_replacement_s=60 launches=1 avg_to_first_gpu_s=240",
				"H100-80GB reclaims=2 avg_notice_s=120 replaced=2 replaced_by_deadline=0 avg_to_replacement_s=330 " +
					"median_to_replacement_s=330 launches=2 avg_to_first_gpu_s=267.5",
				"unknown reclaims=1 avg_notice_s=30 replaced=0 replaced_by_deadline=0 avg_to_replacement_s=0 " +
					"median_to_replacement_s=0 launches=0 avg_to_first_gpu_s=0",
			},
		},
		{
			// aws: 360, 300 and 60 s; the time to first GPU per provider is a column here.
			name: "by provider", o: opts("09:00", "12:00", Provider),
			want: []string{
				"aws reclaims=3 avg_notice_s=120 replaced=3 replaced_by_deadline=1 avg_to_replacement_s=240 " +
					"median_to_replacement_s=300 launches=3 avg_to_first_gpu_s=258.3",
				"gcp reclaims=2 avg_notice_s=30 replaced=1 replaced_by_deadline=0 avg_to_replacement_s=240 " +
					"median_to_replacement_s=240 launches=0 avg_to_first_gpu_s=0",
			},
		},
		{
			name: "by workload, filtered to a GPU", o: func() Options {
				o := opts("09:00", "12:00", Workload)
				o.Filter = Filter{GPU: {"H100-80GB"}}
				return o
			}(),
			want: []string{
				"chat reclaims=2 avg_notice_s=120 replaced=2 replaced_by_deadline=0 avg_to_replacement_s=330 " +
					"median_to_replacement_s=330 launches=2 avg_to_first_gpu_s=267.5",
			},
		},
		{
			// Only c1 and c3 fall in the window; their replacements (10:06) are found after it ends.
			name: "window ends before the replacement", o: opts("09:45", "10:05", Provider),
			want: []string{
				"aws reclaims=2 avg_notice_s=120 replaced=2 replaced_by_deadline=0 avg_to_replacement_s=330 " +
					"median_to_replacement_s=330 launches=1 avg_to_first_gpu_s=355",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Reclaims(ctxT(t), st, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			g := got(res, reclaimCols...)
			if strings.Join(g, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(g, "\n"), strings.Join(tt.want, "\n"))
			}
			if tt.wantNotes != nil && !slices.Equal(res.Notes, tt.wantNotes) {
				t.Errorf("notes = %q, want %q", res.Notes, tt.wantNotes)
			}
		})
	}
}

func TestReclaimsOutputs(t *testing.T) {
	st := reclaimHistory(t)
	res, err := Reclaims(ctxT(t), st, opts("09:00", "12:00", Provider, GPU))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		format string
		want   []string
	}{
		{"table", []string{"PROVIDER", "GPU", "AVG_TO_FIRST_GPU_S", "H100-80GB", "note: time to first GPU at aws: 258.3 s"}},
		{"csv", []string{"provider,gpu,reclaims,avg_notice_s,replaced,replaced_by_deadline,avg_to_replacement_s,",
			"aws,H100-80GB,2,120,2,0,330,330,2,267.5"}},
		{"markdown", []string{"## Reclaims, ", "| provider | gpu | reclaims |", "| aws | H100-80GB | 2 | 120 | 2 | 0 | 330 | 330 | 2 | 267.5 |",
			"> time to first GPU at aws"}},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, tt.format, res, ""); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("%s lacks %q:\n%s", tt.format, w, b.String())
				}
			}
			if tt.format == "csv" {
				if _, err := csv.NewReader(&b).ReadAll(); err != nil {
					t.Error(err)
				}
			}
		})
	}
	var b bytes.Buffer
	if err := Write(&b, "json", res, ""); err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(b.Bytes(), &rows); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(rows, func(r map[string]any) bool { return r["gpu"] == "A10G" })
	if i < 0 || rows[i]["replaced_by_deadline"] != 1.0 || rows[i]["avg_to_replacement_s"] != 60.0 {
		t.Errorf("json rows = %v", rows)
	}
}

func TestKeepAnyOfJoinedValues(t *testing.T) {
	f := Filter{Workload: {"chat"}}
	tests := []struct {
		name, joined string
		want         bool
	}{
		{"alone", "chat", true},
		{"one of two", "batch+chat", true},
		{"none", "batch+summarize", false},
		{"unknown", Unknown, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := f.keepAny(Workload, tt.joined); got != tt.want {
				t.Errorf("keepAny(%q) = %v, want %v", tt.joined, got, tt.want)
			}
		})
	}
	if !(Filter{}).keepAny(GPU, "A100-80GB+H100-80GB") {
		t.Error("no filter drops a value")
	}
}
