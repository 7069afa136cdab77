package system_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/sim"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/console"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/placement"
	"github.com/bursar-dev/bursar/internal/system"
)

// remedyPolicy watches svc and wants a stuck on-demand fallback proposed back to spot.
const remedyPolicy = `name: svc-day
scope: workload=svc
period: day
limit: 10000
thresholds: [{at: 90%}]
approvers: [U0APPROVER]
approval_timeout: 30m
remedies: [fallback]
`

// remedyRig is the whole arbiter as `arbiter run` builds it, stepped on a virtual clock: the
// service, its budgets and approvals, and the anomaly watcher, over real JetStream and the sim.
type remedyRig struct {
	t   *testing.T
	env *bustest.Env
	clk *clock
	fl  *sim.Fleet
	sys *system.System
}

func newRemedyRig(t *testing.T, policy string) *remedyRig {
	ctx := context.Background()
	env := bustest.Start(t)
	if err := bus.Ensure(ctx, env.JS, bus.Options{LeaseTTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	cfg, err := fleet.Parse([]byte(fleetYAML), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{now: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)}
	putPolicy(t, env, policy, clk.Now())
	r := &remedyRig{t: t, env: env, clk: clk, fl: sim.New(cfg, clk.Now)}
	r.price(events.Spot, 1)
	r.price(events.OnDemand, 4)
	r.sys, err = system.New(ctx, system.Options{Arbiter: arbiter.Options{Config: cfg, JS: env.JS,
		Actuator: actuate.Router{"a": r.fl}, Clock: clk, Identity: "test", LeaseTTL: time.Minute, // the watcher runs for long stretches between steps
		Policy: placement.Policy{MaxHedge: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.sys.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.sys.Close(); err != nil {
			t.Error(err)
		}
	})
	return r
}

func (r *remedyRig) price(m events.Market, usd float64) {
	r.t.Helper()
	e := &events.PriceObserved{Meta: events.Meta{At: r.clk.Now()}, Provider: "aws", Region: "us-east-1", Zone: "us-east-1a",
		InstanceType: "p5.xlarge", GPUModel: "H100-80GB", GPUCount: 1, GPUMemoryGB: 80, Market: m, USDPerHour: usd, Source: "test"}
	if err := bus.NewPublisher(r.env.JS).Publish(context.Background(), e); err != nil {
		r.t.Fatal(err)
	}
}

func (r *remedyRig) advance(d time.Duration) {
	r.clk.mu.Lock()
	r.clk.now = r.clk.now.Add(d)
	r.clk.mu.Unlock()
}

// step runs n rounds of a minute each: reclaims due are published first, as the demo does.
func (r *remedyRig) step(n int) {
	r.t.Helper()
	ctx := context.Background()
	for range n {
		r.advance(time.Minute)
		if _, err := r.fl.Notify(ctx, bus.NewPublisher(r.env.JS), r.sys.Service.AwaitNotices); err != nil {
			r.t.Fatal(err)
		}
		if err := r.sys.Service.AwaitFolded(ctx); err != nil {
			r.t.Fatal(err)
		}
		r.sys.Service.Step(ctx)
	}
}

// watch ticks the anomaly watcher every 5 minutes for d, the service left as it is.
func (r *remedyRig) watch(d time.Duration) {
	for end := r.clk.Now().Add(d); r.clk.Now().Before(end); {
		r.advance(5 * time.Minute)
		r.sys.Anomalies.Tick(context.Background())
	}
}

// watchUntilProposed watches for at most d, until svc's book holds a remedy.
func (r *remedyRig) watchUntilProposed(d time.Duration) {
	r.t.Helper()
	for end := r.clk.Now().Add(d); r.clk.Now().Before(end); {
		r.watch(5 * time.Minute)
		if r.remedies() > 0 {
			return
		}
	}
	r.t.Fatalf("no remedy proposed in %v", d)
}

// remedies counts the remedies svc's book holds, as the bucket holds it (Remedy writes it before
// it returns).
func (r *remedyRig) remedies() int {
	r.t.Helper()
	books, err := arbiter.LoadBooks(context.Background(), r.env.JS, bus.BucketPlacement)
	if err != nil {
		r.t.Fatal(err)
	}
	n := 0
	if b := books["svc"]; b != nil {
		for _, h := range b.Holds {
			if h.Remedy != "" {
				n++
			}
		}
	}
	return n
}

// open waits up to 10 s (the ask loop runs beside the service) until n approvals are open, and
// returns those open then.
func (r *remedyRig) open(n int) []console.Hold {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if open := r.sys.Approvals().Open(); len(open) >= n {
			return open
		}
	}
	return r.sys.Approvals().Open()
}

// burning is svc's $/h now by market.
func (r *remedyRig) burning() map[string]float64 {
	out := map[string]float64{}
	for _, b := range r.sys.Service.Burning() {
		out[b.Market] += b.USDPerHour
	}
	return out
}

// stuck runs svc on spot long enough for the detector to learn it, then takes the zone's spot
// capacity away: svc falls back to on-demand. Capacity comes back at once, but the arbiter is
// left alone (the fallback stays) while the watcher watches.
func (r *remedyRig) stuck() {
	t := r.t
	t.Helper()
	r.step(3)
	if got := r.burning(); got["spot"] != 2 || got["on_demand"] != 0 {
		t.Fatalf("before the fallback svc burns %v, want 2 USD/h on spot", got)
	}
	r.watch(50 * time.Hour) // the detector learns for 48 h
	r.fl.SetCapacity("a", 0)
	r.step(5)
	if got := r.burning(); got["spot"] != 0 || got["on_demand"] != 8 {
		t.Fatalf("after spot capacity went, svc burns %v, want 8 USD/h on on-demand", got)
	}
	r.fl.SetCapacity("a", 10)
}

func TestStuckFallbackAsksOnceAndApprovedMovesBackToSpot(t *testing.T) {
	ctx := context.Background()
	r := newRemedyRig(t, remedyPolicy)
	r.stuck()
	// The spot offer was reclaimed just now: not proposed until it has been quiet for an hour.
	r.watch(30 * time.Minute)
	if n := r.remedies(); n != 0 {
		t.Fatalf("%d remedies proposed just after the reclaim, before spot had been quiet", n)
	}
	r.watchUntilProposed(2 * time.Hour)
	open := r.open(1)
	r.watch(10 * time.Minute) // the anomaly's updates ask nothing more
	if n := r.remedies(); n != 1 {
		t.Fatalf("%d remedies in svc's book after more updates of the anomaly, want still 1", n)
	}
	if len(open) != 1 {
		t.Fatalf("%d approvals open after the fallback stayed, want 1: %+v", len(open), open)
	}
	if reasons := strings.Join(open[0].Reasons, " "); !strings.Contains(reasons, "saves 6.00/h") ||
		!strings.Contains(reasons, "workload=svc@") || !strings.Contains(reasons, "Risk") {
		t.Errorf("the question says %q; want the anomaly, the saving and the risk", reasons)
	}
	launches := len(r.fl.Calls())
	if err := r.sys.Approvals().Decide(ctx, open[0].Plan, true, "U0APPROVER"); err != nil {
		t.Fatal(err)
	}
	r.step(5)
	var spot []actuate.Target
	for _, c := range r.fl.Calls()[launches:] {
		if c.Kind == "launch" && c.Market == events.Spot {
			spot = append(spot, c)
		}
	}
	if len(spot) != 1 || spot[0].Replicas != 2 {
		t.Errorf("after the approval the actuator got spot launches %+v, want one to 2 replicas", spot)
	}
	if got := r.burning(); got["spot"] != 2 || got["on_demand"] != 0 {
		t.Errorf("after the remedy svc burns %v, want 2 USD/h on spot", got)
	}
}

func TestStuckFallbackWithoutTheRemedyAsksNothing(t *testing.T) {
	r := newRemedyRig(t, strings.Replace(remedyPolicy, "remedies: [fallback]\n", "", 1))
	r.stuck()
	r.watch(3 * time.Hour)
	if n, open := r.remedies(), r.sys.Approvals().Open(); n != 0 || len(open) != 0 {
		t.Errorf("a policy without the remedy asked: %d remedies in the book, approvals %+v", n, open)
	}
	if got := r.burning(); got["on_demand"] != 8 {
		t.Errorf("svc burns %v, want the fallback left as it is", got)
	}
}
