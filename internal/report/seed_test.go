package report

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/store"
	"github.com/bursar-dev/bursar/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// at is a time on the day of the known history, 2026-11-30, UTC.
func at(hhmm string) time.Time {
	t, err := time.Parse("2006-01-02 15:04:05", "2026-11-30 "+hhmm)
	if err != nil {
		t, err = time.Parse("2006-01-02 15:04", "2026-11-30 "+hhmm)
	}
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func tsv(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.000") }

// seed writes rows into one table as TabSeparated, one row per []any.
func seed(t *testing.T, st *store.Store, table, columns string, rows ...[]any) {
	t.Helper()
	var b strings.Builder
	for _, r := range rows {
		for i, v := range r {
			if i > 0 {
				b.WriteByte('\t')
			}
			switch x := v.(type) {
			case time.Time:
				b.WriteString(tsv(x))
			case bool:
				fmt.Fprint(&b, map[bool]int{false: 0, true: 1}[x])
			default:
				fmt.Fprint(&b, x)
			}
		}
		b.WriteByte('\n')
	}
	// The dedup token names the rows, so a test may seed one table twice.
	token := fmt.Sprintf("%s/%s/%x", t.Name(), table, sha256.Sum256([]byte(b.String())))
	if err := st.Insert(context.Background(), table, columns, token, []byte(b.String())); err != nil {
		t.Fatal(err)
	}
}

// replicaSample is one replica.state observation.
type replicaSample struct {
	at                                   string
	workload, location, provider, market string
	offer, gpu                           string
	gpus, ready                          int
	usd                                  float64
}

// seedReplicas writes replica.state rows with the interval each closes, as the recorder does.
func seedReplicas(t *testing.T, st *store.Store, samples ...replicaSample) {
	seedHeldReplicas(t, st, nil, samples...)
}

// seedHeldReplicas is seedReplicas where the series of held (by "workload@location") name the
// instances their ready replicas run on, as the recorder stores them (instances, and the
// interval's prev_instances).
func seedHeldReplicas(t *testing.T, st *store.Store, held map[string][]string, samples ...replicaSample) {
	type last struct {
		at        time.Time
		ready     int
		usd       float64
		instances string
	}
	prev := map[string]last{}
	var rows [][]any
	for i, s := range samples {
		k := s.workload + "|" + s.location + "|" + s.market + "|" + s.offer
		now := at(s.at)
		p, ok := prev[k]
		prevAt, prevReady, prevUSD, prevInstances := now, 0, 0.0, "[]"
		if ok {
			prevAt, prevReady, prevUSD, prevInstances = p.at, p.ready, p.usd, p.instances
		}
		instances := "[]"
		if ids := held[s.workload+"@"+s.location]; s.ready > 0 && len(ids) > 0 {
			instances = "['" + strings.Join(ids, "','") + "']"
		}
		prev[k] = last{now, s.ready, s.usd, instances}
		rows = append(rows, []any{fmt.Sprintf("rs%d", i), now, "1", s.workload, s.location, s.provider, s.market, s.offer,
			s.gpu, s.gpus, s.usd, s.ready, s.ready, prevAt, prevReady, prevUSD, instances, prevInstances})
	}
	seed(t, st, "replica_state", "id, at, version, workload, location, provider, market, offer, gpu_model, "+
		"gpus_per_replica, usd_per_hour, desired, ready, prev_at, prev_ready, prev_usd_per_hour, instances, prev_instances", rows...)
}

// tokenSample is one replica's counters.
type tokenSample struct {
	at, workload, location, replica string
	prompt, gen, requests           int64
	reset                           bool
}

// seedTokens writes tokens.sample rows with the counters' increases, as the recorder does.
func seedTokens(t *testing.T, st *store.Store, samples ...tokenSample) {
	prev := map[string]tokenSample{}
	var rows [][]any
	for i, s := range samples {
		k := s.workload + "|" + s.location + "|" + s.replica
		p, ok := prev[k]
		prev[k] = s
		var dp, dg, dr int64
		switch {
		case s.reset:
			dp, dg, dr = s.prompt, s.gen, s.requests
		case ok:
			dp, dg, dr = s.prompt-p.prompt, s.gen-p.gen, s.requests-p.requests
		}
		rows = append(rows, []any{fmt.Sprintf("ts%d", i), at(s.at), "1", s.location, s.workload, s.replica, "vllm",
			s.prompt, s.gen, s.requests, s.reset, dp, dg, dr})
	}
	seed(t, st, "tokens_sample", "id, at, version, location, workload, replica, server, prompt_tokens, "+
		"generation_tokens, requests, reset, delta_prompt_tokens, delta_generation_tokens, delta_requests", rows...)
}

const (
	awsSpot = "aws-use1/us-east-1a/p5.48xlarge/spot"
	gcpOD   = "gcp-usc1/-/a2-ultragpu-1g/on_demand"
)

// history is the known history every report test reads, worked by hand in each test:
//
//	chat on aws-use1 spot, 2 replicas of 2 H100s: $4/replica-hour 09:00-10:30, $5 from 10:30;
//	  last seen 12:00, still running.
//	chat on gcp-usc1 on-demand, 1 replica of 1 A100 at $3 from 09:00; last seen 11:00, still
//	  running.
//	tokens: aws-use1 4.5M prompt + 1.5M generation (a server reset at 11:00 included), gcp-usc1
//	  2M + 1M, all between 09:00 and 12:00.
func history(t *testing.T) *store.Store {
	st := storetest.New(t)
	seedReplicas(t, st,
		replicaSample{"09:00", "chat", "aws-use1", "aws", "spot", awsSpot, "H100-80GB", 2, 2, 4},
		replicaSample{"10:30", "chat", "aws-use1", "aws", "spot", awsSpot, "H100-80GB", 2, 2, 5},
		replicaSample{"12:00", "chat", "aws-use1", "aws", "spot", awsSpot, "H100-80GB", 2, 2, 5},
		replicaSample{"09:00", "chat", "gcp-usc1", "gcp", "on_demand", gcpOD, "A100-80GB", 1, 1, 3},
		replicaSample{"11:00", "chat", "gcp-usc1", "gcp", "on_demand", gcpOD, "A100-80GB", 1, 1, 3},
	)
	seedTokens(t, st,
		tokenSample{"09:00", "chat", "aws-use1", "r1", 0, 0, 0, false},
		tokenSample{"10:00", "chat", "aws-use1", "r1", 2_000_000, 500_000, 100, false},
		tokenSample{"11:00", "chat", "aws-use1", "r1", 1_000_000, 500_000, 40, true},
		tokenSample{"11:45", "chat", "aws-use1", "r1", 2_500_000, 1_000_000, 90, false},
		tokenSample{"09:00", "chat", "gcp-usc1", "g1", 0, 0, 0, false},
		tokenSample{"11:30", "chat", "gcp-usc1", "g1", 2_000_000, 1_000_000, 70, false},
	)
	return st
}

// testFleet says where the locations are: us-west-2 has the cheapest on-demand H100s.
func testFleet() *fleet.Config {
	return &fleet.Config{
		Locations: []fleet.Location{
			{Name: "aws-use1", Provider: "aws", Region: "us-east-1", Zones: []string{"us-east-1a"}, EgressPerGB: 0.09},
			{Name: "aws-usw2", Provider: "aws", Region: "us-west-2", EgressPerGB: 0.09},
			{Name: "gcp-usc1", Provider: "gcp", Region: "us-central1", EgressPerGB: 0.12},
		},
		Workloads: []fleet.Workload{{Name: "chat", WeightsGB: 100}},
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// opts is a window of the known day with the report's time at 12:30.
func opts(since, until string, by ...Dim) Options {
	return Options{Window: Window{Since: at(since), Until: at(until)}, By: by, Now: at("12:30"), Fleet: testFleet()}
}
