package arbiter_test

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/sim"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/placement"
)

// The benchmark estate: 20 locations, each with 5 instance types on spot and on-demand (200
// offers), and 1,000 workloads of one or two replicas.
const (
	benchLocations = 20
	benchTypes     = 5
	benchWorkloads = 1000
	benchReclaims  = 100 // samples per condition
	benchPriceRate = 10_000
)

var benchModels = []string{"H100-80GB", "A100-80GB", "L40S"} // canonical names: the fleet check rejects others

func benchFleet() *fleet.Config { return benchFleetOf(benchWorkloads) }

// benchFleetOf is the benchmark estate with n workloads.
func benchFleetOf(n int) *fleet.Config {
	var b strings.Builder
	b.WriteString("locations:\n")
	for i := range benchLocations {
		fmt.Fprintf(&b, "  - {name: l%02d, provider: aws, region: r%d, zones: [z%02d], egress_per_gb: 0.09, actuator: {kind: sim}}\n", i, i/4, i)
	}
	b.WriteString("workloads:\n")
	for i := range n {
		n := 1 + i%2
		fmt.Fprintf(&b, "  - {name: w%04d, gpu: {models: [%s], count: 1}, replicas: {min: %d, max: %d}, markets: [spot, on_demand], weights_gb: 40, cold_start: 3m}\n",
			i, benchModels[i%len(benchModels)], n, n)
	}
	cfg, err := fleet.Parse([]byte(b.String()), "bench.yaml")
	if err != nil {
		panic(err)
	}
	return cfg
}

// benchPrice is offer k's price event at time at, nudged by tick so that every event is a change.
func benchPrice(k int, at time.Time, tick int) *events.PriceObserved {
	loc, typ, od := k/(2*benchTypes), (k/2)%benchTypes, k%2 == 1
	m, usd := events.Spot, 1.0+0.05*float64((loc*7+typ*3)%11)
	if od {
		m, usd = events.OnDemand, usd*3
	}
	usd += 0.0001 * float64(tick%2)
	return &events.PriceObserved{Meta: events.Meta{At: at}, Provider: "aws", Region: fmt.Sprintf("r%d", loc/4),
		Zone: fmt.Sprintf("z%02d", loc), InstanceType: fmt.Sprintf("t%d", typ), GPUModel: benchModels[typ%len(benchModels)],
		GPUCount: 1, GPUMemoryGB: 80, Market: m, USDPerHour: usd, Source: "bench"}
}

// timed signals each replacement launch as it reaches the actuator, then passes it to the sim.
type timed struct {
	*sim.Fleet
	replaced chan time.Time
}

func (t *timed) Scale(ctx context.Context, tg actuate.Target) error {
	if tg.Kind == "launch" && (tg.Reason == "reclaim" || tg.Reason == "fallback") {
		select {
		case t.replaced <- time.Now():
		default:
		}
	}
	return t.Fleet.Scale(ctx, tg)
}

// BenchmarkReclaimReaction measures the time from a capacity.reclaimed event being published to
// the replacement action reaching the actuator, through the embedded NATS, with 1,000 workloads
// across 200 offers, while 10,000 price events per second stream in. Baseline: the same reclaims
// with no price traffic, measured in the same run.
func BenchmarkReclaimReaction(b *testing.B) {
	for b.Loop() {
		quiet := reclaimReaction(b, false)
		busy := reclaimReaction(b, true)
		report(b, "", busy)
		report(b, "quiet_", quiet)
	}
	b.ReportMetric(0, "ns/op")
}

func report(b *testing.B, prefix string, samples []time.Duration) {
	slices.Sort(samples)
	q := func(p float64) float64 { // nearest rank: the smallest sample with at least p of them at or below it
		i := int(math.Ceil(p*float64(len(samples)))) - 1
		return float64(samples[max(0, min(len(samples)-1, i))].Microseconds()) / 1000
	}
	b.ReportMetric(q(0.50), prefix+"p50_ms")
	b.ReportMetric(q(0.99), prefix+"p99_ms")
	b.ReportMetric(float64(samples[len(samples)-1].Microseconds())/1000, prefix+"max_ms")
}

func reclaimReaction(b *testing.B, background bool) []time.Duration {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := bustest.Start(b)
	cfg := benchFleet()
	c := &clock{now: t0}
	act := &timed{Fleet: sim.New(cfg, c.Now), replaced: make(chan time.Time, 1)}
	router := actuate.Router{}
	for _, l := range cfg.Locations {
		router[l.Name] = act
	}
	// Each part on a connection of its own, as deployed: the arbiter, the collector streaming
	// prices (streamPrices) and the node agent publishing the notice.
	_, arbiterJS := env.ConnectAs(b, bus.RoleArbiter)
	_, agentJS := env.ConnectAs(b, bus.RoleCollector)
	svc, err := arbiter.New(ctx, arbiter.Options{Config: cfg, JS: arbiterJS, Actuator: router, Clock: c,
		Log: slog.New(slog.DiscardHandler), Identity: "bench", Policy: placement.Policy{MaxHedge: -1},
		Interval: time.Hour, ReportEvery: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	defer func() { cancel(); <-done }()
	placeBench(ctx, b, env, svc)
	var sent atomic.Int64
	began := time.Now()
	if background {
		_, collectorJS := env.ConnectAs(b, bus.RoleCollector)
		go streamPrices(ctx, collectorJS, &sent)
		time.Sleep(time.Second) // let the stream and the debounced re-plans reach a steady state
	}
	pub := bus.NewPublisher(agentJS)
	var out []time.Duration
	unmatched := 0
	for i := 0; len(out) < benchReclaims; i++ {
		// Between samples (not timed): the previous reclaim's deadline passes and the estate
		// settles, so each notice falls on a steady estate.
		c.Advance(3 * time.Minute)
		settleBench(ctx, svc)
		if err := svc.AwaitFolded(ctx); err != nil { // the reports it published are folded back
			b.Fatal(err)
		}
		notice, ok := act.Reclaim(fmt.Sprintf("l%02d", i%benchLocations), 2*time.Minute)
		if !ok {
			continue
		}
		drain(act.replaced)
		start := time.Now()
		if err := pub.Publish(ctx, notice); err != nil {
			b.Fatal(err)
		}
		select {
		case at := <-act.replaced:
			out = append(out, at.Sub(start))
		case <-time.After(5 * time.Second):
			// The arbiter found no ready replica the notice could be (its books lag the sim by one
			// report); nothing needed replacing. Counted, not timed.
			if fellOnAReplica(svc, notice.ID) {
				b.Fatalf("reclaim %d of %s at %s: a replica was marked reclaimed but no replacement reached the actuator",
					i, notice.Instance, notice.Location)
			}
			unmatched++
		}
	}
	if background {
		b.ReportMetric(float64(sent.Load())/time.Since(began).Seconds(), "price_events/s")
		b.ReportMetric(float64(unmatched), "unmatched_notices")
	}
	return out
}

func fellOnAReplica(svc *arbiter.Service, notice string) bool {
	for _, bk := range svc.Books() {
		for _, r := range bk.Replicas {
			if r.Notice == notice {
				return true
			}
		}
	}
	return false
}

func drain(ch chan time.Time) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// placeBench prices every offer, lets the arbiter place every workload and waits until the
// estate is ready and quiet.
func placeBench(ctx context.Context, b *testing.B, env *bustest.Env, svc *arbiter.Service) {
	priceBench(ctx, b, env)
	last := benchPrice(benchLocations*benchTypes*2-1, t0, 0)
	deadline := time.Now().Add(30 * time.Second)
	for !svc.Leading() || !svc.KnowsPrice(fmt.Sprintf("l%02d/z%02d/t%d/on_demand", benchLocations-1, benchLocations-1, benchTypes-1), last.USDPerHour) {
		if time.Now().After(deadline) {
			b.Fatal("the arbiter never led or never saw the prices")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for range 2 { // launch, then ready and drain the fallbacks
		settleBench(ctx, svc)
	}
}

// priceBench publishes every offer's price.
func priceBench(ctx context.Context, b *testing.B, env *bustest.Env) {
	pub := bus.NewPublisher(env.JS)
	for k := range benchLocations * benchTypes * 2 {
		if _, err := pub.PublishAsync(benchPrice(k, t0, 0)); err != nil {
			b.Fatal(err)
		}
	}
	if err := pub.Flush(ctx); err != nil {
		b.Fatal(err)
	}
}

// settleBench reports, plans and waits for the actions twice: launches become ready in the sim
// at once, and the second round drains what they replace.
func settleBench(ctx context.Context, svc *arbiter.Service) {
	for range 2 {
		svc.Report(ctx)
		svc.Pass(ctx)
		for svc.InFlight() > 0 {
			time.Sleep(time.Millisecond)
		}
	}
	svc.Report(ctx)
}

// streamPrices publishes benchPriceRate price changes per second (catching up every
// millisecond on what is due) until ctx ends, counting what it sent in sent.
func streamPrices(ctx context.Context, js jetstream.JetStream, sent *atomic.Int64) {
	pub := bus.NewPublisher(js)
	offers := benchLocations * benchTypes * 2
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	start := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			due := int64(time.Since(start).Seconds() * benchPriceRate)
			for sent.Load() < due {
				i := int(sent.Add(1))
				at := t0.Add(time.Duration(i) * time.Microsecond)
				if _, err := pub.PublishAsync(benchPrice(i%offers, at, i/offers)); err != nil {
					// Too many unacknowledged publishes: wait for the server, then go on.
					if pub.Flush(ctx) != nil {
						return
					}
				}
			}
		}
	}
}
