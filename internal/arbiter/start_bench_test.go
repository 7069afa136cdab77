package arbiter_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/sim"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/placement"
)

// BenchmarkStart measures a fresh arbiter taking the lead on an estate of 10,000 workloads (about
// 15,000 replicas over 200 offers), with the default 10 s lease: the time from its start until
// every workload is placed, its actions applied and every book durable, and how often it lost the
// lead meanwhile (a leader must never lose its lease to its own bookkeeping; 0 is the goal).
// Baseline: the same start with 1,000 workloads, in the same run.
func BenchmarkStart(b *testing.B) {
	for b.Loop() {
		small, smallLost := startOnce(b, benchWorkloads)
		large, largeLost := startOnce(b, 10*benchWorkloads)
		b.ReportMetric(large.Seconds(), "start_10k_s")
		b.ReportMetric(float64(largeLost), "leads_lost_10k")
		b.ReportMetric(small.Seconds(), "start_1k_s")
		b.ReportMetric(float64(smallLost), "leads_lost_1k")
	}
	b.ReportMetric(0, "ns/op")
}

func startOnce(b *testing.B, workloads int) (time.Duration, uint64) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := bustest.Start(b)
	cfg := benchFleetOf(workloads)
	fleet := sim.New(cfg, func() time.Time { return t0 })
	router := actuate.Router{}
	for _, l := range cfg.Locations {
		router[l.Name] = fleet
	}
	priceBench(ctx, b, env)
	_, js := env.ConnectAs(b, bus.RoleArbiter)
	svc, err := arbiter.New(ctx, arbiter.Options{Config: cfg, JS: js, Actuator: router, Clock: fixed{t0},
		Log: slog.New(slog.DiscardHandler), Identity: "bench", Policy: placement.Policy{MaxHedge: -1},
		Interval: time.Hour, ReportEvery: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	defer func() { cancel(); <-done }()
	deadline := start.Add(5 * time.Minute)
	for !placed(svc, workloads) {
		if time.Now().After(deadline) {
			b.Fatalf("%d workloads: not placed and durable after 5 minutes", workloads)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start), svc.Leads() - 1
}

// placed says whether the arbiter leads, holds replicas for every workload, has no action in
// flight and every book written.
func placed(svc *arbiter.Service, workloads int) bool {
	return svc.Leading() && svc.InFlight() == 0 && svc.Durable() && svc.Placed() == workloads
}

// fixed is a clock that does not move: the start is measured on the wall clock alone.
type fixed struct{ t time.Time }

func (f fixed) Now() time.Time { return f.t }
