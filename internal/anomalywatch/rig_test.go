package anomalywatch

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/anomaly"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
)

var t0 = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// clock is the arbiter's clock as a test drives it.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

// spend is what runs, as a test sets it (the arbiter's Burning).
type spend struct {
	mu    sync.Mutex
	burns []arbiter.Burn
}

func (s *spend) Burning() []arbiter.Burn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]arbiter.Burn(nil), s.burns...)
}

func (s *spend) set(b ...arbiter.Burn) { s.mu.Lock(); defer s.mu.Unlock(); s.burns = b }

// spot is llm's usual spend, beside one on-demand replica (base); fallback is that on-demand group
// grown by a fallback that does not return.
var (
	spot     = arbiter.Burn{Workload: "llm", Team: "search", Provider: "aws", Location: "aws-use1", Market: "spot", GPUModel: "H100-80GB", Ready: 4, GPUs: 32, USDPerHour: 20}
	base     = arbiter.Burn{Workload: "llm", Team: "search", Provider: "aws", Location: "aws-use1", Market: "on_demand", GPUModel: "H100-80GB", Ready: 1, GPUs: 8, USDPerHour: 15}
	fallback = arbiter.Burn{Workload: "llm", Team: "search", Provider: "aws", Location: "aws-use1", Market: "on_demand", GPUModel: "H100-80GB", Ready: 5, GPUs: 40, USDPerHour: 75}
)

func testConfig() *fleet.Config {
	return &fleet.Config{Locations: []fleet.Location{{Name: "aws-use1", Provider: "aws", Region: "us-east-1"}},
		Workloads: []fleet.Workload{{Name: "llm", Team: "search"}}}
}

// detector learns for 3 hours instead of 2 days, so that a test's history is short.
func detector() anomaly.Config {
	c := anomaly.DefaultConfig()
	c.Learn = 3 * time.Hour
	return c
}

// run ticks the watcher every step for d.
func run(ctx context.Context, w *Watcher, c *clock, d time.Duration) {
	for end := c.Now().Add(d); c.Now().Before(end); {
		c.Add(5 * time.Minute)
		w.Tick(ctx)
	}
}

// published reads every cost.anomaly in the FLEET stream, in order.
func published(t *testing.T, js jetstream.JetStream) []*events.CostAnomaly {
	t.Helper()
	var out []*events.CostAnomaly
	for _, e := range bustest.Events(t, js, bus.Fleet, "bursar.anomaly.>") {
		out = append(out, e.(*events.CostAnomaly))
	}
	return out
}

func newEnv(t *testing.T) *bustest.Env { return bustest.Start(t) }

func answersKV(t *testing.T, js jetstream.JetStream) jetstream.KeyValue {
	t.Helper()
	kv, err := js.KeyValue(context.Background(), bus.BucketAnomalyAnswers)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// testConfigNoTeam has one workload and no team: one scope, so one anomaly per excursion.
var testConfigNoTeam = fleet.Config{Locations: []fleet.Location{{Name: "aws-use1", Provider: "aws", Region: "us-east-1"}},
	Workloads: []fleet.Workload{{Name: "llm"}}}
