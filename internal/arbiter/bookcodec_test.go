package arbiter

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/placement"
)

// largestBook is the largest book a workload of n replicas can have: n ready replicas, each
// launched by an action of its own at a time of its own (the least a compressor can share), and
// a move under way that launches n more (listed in the book and in the action) and drains the n.
func largestBook(n int) *Book {
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	hex := func() string { return fmt.Sprintf("%016x", rng.Uint64()) }
	offers := []string{"aws-use1/us-east-1a/p5.48xlarge/spot", "aws-use1/us-east-1b/p5.48xlarge/spot",
		"gcp-usc1/us-central1-a/a3-highgpu-8g/spot", "azure-eus/eastus/Standard_ND96isr_H100_v5/on_demand"}
	b := &Book{Workload: "chat-completions-large", Epoch: 123456}
	var drain []string
	for i := range n {
		off := offers[i%len(offers)]
		r := Rep{ID: hex() + "-" + strconv.Itoa(rng.IntN(8)), Offer: off, Location: off[:8], Market: events.Spot,
			State: placement.StateReady, Since: t0.Add(time.Duration(rng.Int64N(int64(7 * 24 * time.Hour)))),
			PricePerHour: 10 + rng.Float64()*40}
		b.Replicas = append(b.Replicas, r)
		drain = append(drain, r.ID)
	}
	id := hex() + hex() + hex() + hex()
	rec := Record{Target: actuate.Target{ActionID: id, Group: actuate.Group{Workload: b.Workload, Location: "aws-use1",
		Market: events.OnDemand}, Offer: offers[3], Kind: "launch", Reason: "move", Replicas: n},
		PlanID: "plan-" + hex(), Stage: StageRecorded, At: t0.Add(8 * 24 * time.Hour), Drain: drain}
	for i := range n {
		r := Rep{ID: id[:16] + "-" + strconv.Itoa(i), Offer: offers[3], Location: "azure-eus", Market: events.OnDemand,
			State: placement.StateLaunching, Since: rec.At, PricePerHour: 98.32, Move: true}
		b.Replicas = append(b.Replicas, r)
		rec.Launch = append(rec.Launch, r)
	}
	b.Actions = []Record{rec}
	return b
}

// TestLargestBookIsStored saves and loads, through a real server with NATS's default
// max_payload (1 MiB), the largest book of the largest workload the fleet file accepts.
// Before, a plain JSON book of a 3,000-replica workload was refused ("maximum payload exceeded").
func TestLargestBookIsStored(t *testing.T) {
	ctx := context.Background()
	env := bustest.Start(t)
	kv, err := env.JS.KeyValue(ctx, bus.BucketPlacement)
	if err != nil {
		t.Fatal(err)
	}
	b := largestBook(fleet.MaxReplicas)
	plain, _ := json.Marshal(b)
	stored, err := encodeBook(b)
	if err != nil {
		t.Fatal(err)
	}
	reps := len(b.Replicas) + len(b.Actions[0].Launch)
	t.Logf("%d replicas (%d listed): JSON %d bytes (%.0f per replica listed), stored %d bytes (%.1f per replica listed); max_payload %d",
		fleet.MaxReplicas, reps, len(plain), float64(len(plain))/float64(reps), len(stored), float64(len(stored))/float64(reps),
		env.Conn.MaxPayload())
	if bound := bookBound(fleet.MaxReplicas); int64(len(stored)) > bound {
		t.Errorf("stored %d bytes, over the bound checkPayload assumes (%d)", len(stored), bound)
	}
	s := KVBooks{KV: kv}
	if err := s.Save(ctx, b); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	back := got[b.Workload]
	if back == nil || back.rev != b.rev {
		t.Fatalf("the book did not load back: %v", back)
	}
	back.rev, back.ver, back.saved = b.rev, b.ver, b.saved
	if !reflect.DeepEqual(back, b) {
		t.Error("the book loaded back differs from the one saved")
	}
	if err := s.Save(ctx, back); err != nil { // and it is written again over itself
		t.Fatal(err)
	}
}

// A book written before compression existed (plain JSON, whatever its size) still loads.
func TestPlainJSONBookLoads(t *testing.T) {
	b := largestBook(500)
	plain, _ := json.Marshal(b)
	if len(plain) <= compressAbove {
		t.Fatalf("a %d-byte book is no test of a large plain one", len(plain))
	}
	got, err := decodeBook("workload."+b.Workload, plain)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, b) {
		t.Error("the plain book decoded differs")
	}
	small := &Book{Workload: "svc"}
	data, _ := encodeBook(small)
	if data[0] != '{' {
		t.Errorf("a small book is stored as %q, want readable JSON", data[:8])
	}
}

func gz(s string) string {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write([]byte(s))
	_ = zw.Close()
	return buf.String()
}

func TestDecodeBookRefusesWhatIsNotABook(t *testing.T) {
	for _, tc := range []struct{ name, key, value string }{
		{"a publish acknowledgement", "workload.chat", `{"stream":"KV_bursar_placement","seq":7}`},
		{"an API answer", "workload.chat", `{"type":"io.nats.jetstream.api.v1.account_info_response"}`},
		{"empty", "workload.chat", ``},
		{"null", "workload.chat", `null`},
		{"an array", "workload.chat", `[]`},
		{"another workload's book", "workload.chat", `{"workload":"svc"}`},
		{"a workload whose key differs", "workload.a_b", `{"workload":"a_b."}`},
		{"wrong types", "workload.chat", `{"workload":"chat","replicas":"many"}`},
		{"truncated gzip", "workload.chat", gz(`{"workload":"chat"}`)[:12]},
		{"gzip of no JSON", "workload.chat", gz(`hello`)},
		{"gzip of an acknowledgement", "workload.chat", gz(`{"stream":"x","seq":1}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := decodeBook(tc.key, []byte(tc.value)); !errors.Is(err, errNotABook) {
				t.Errorf("decodeBook(%q) = %v, want errNotABook", tc.value, err)
			}
		})
	}
}

func FuzzDecodeBook(f *testing.F) {
	f.Add("workload.chat", []byte(`{"workload":"chat","replicas":[{"id":"r1"}]}`))
	f.Add("workload.chat", []byte(gz(`{"workload":"chat"}`)))
	f.Add("workload.chat", []byte(`{"stream":"KV_bursar_placement","seq":7}`))
	f.Fuzz(func(t *testing.T, key string, data []byte) {
		b, err := decodeBook(key, data)
		if err != nil {
			if !errors.Is(err, errNotABook) {
				t.Fatalf("error %v is not errNotABook", err)
			}
			return
		}
		if (KVBooks{}).key(b.Workload) != key {
			t.Fatalf("a book of %q decoded under %q", b.Workload, key)
		}
		again, err := encodeBook(b)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := decodeBook(key, again); err != nil {
			t.Fatalf("a decoded book does not decode once written again: %v", err)
		}
	})
}

func TestCheckPayload(t *testing.T) {
	parse := func(replicas string) *fleet.Config {
		t.Helper()
		cfg, err := fleet.Parse([]byte(`locations:
  - {name: a, provider: aws, region: us-east-1, zones: [us-east-1a], actuator: {kind: sim}}
workloads:
  - name: chat
    gpu: {models: [H100-80GB], count: 1}
    replicas: `+replicas+`
    markets: [spot]
`), "test.yaml")
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	for _, tc := range []struct {
		name     string
		replicas string
		payload  int64
		wantErr  bool
	}{
		{"the largest workload on NATS's default", "{min: 10000, max: 10000}", 1 << 20, false},
		{"no max counts at the limit", "{min: 1}", 1 << 20, false},
		{"the largest workload on a small max_payload", "{min: 3000, max: 3000}", 256 << 10, true},
		{"no max on a small max_payload", "{min: 2}", 256 << 10, true},
		{"a small workload on a small max_payload", "{min: 2, max: 100}", 256 << 10, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkPayload(parse(tc.replicas), tc.payload)
			if (err != nil) != tc.wantErr {
				t.Fatalf("checkPayload = %v, want error %v", err, tc.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), "max_payload") {
				t.Errorf("the error does not say what to raise: %v", err)
			}
		})
	}
}
