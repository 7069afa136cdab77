package demo

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/sim"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
)

// The traffic model. Each workload's load peaks at peakReplicas times its minimum replicas'
// worth of its scaling target and follows the arrival-rate curve; a ready replica serves up to
// headroom times its target, so a fleet short of replicas serves less and its demand shows it.
const (
	peakReplicas     = 1.5
	headroom         = 1.25
	tokensPerRequest = 800
	promptShare      = 0.75
)

// driver plays the world around the arbiter: the zones' spot capacity from the trace, and the
// traffic the ready replicas serve.
type driver struct {
	clk      *Clock
	fleet    *sim.Fleet
	cfg      *fleet.Config
	pub      *bus.Publisher
	svc      stepper
	log      *slog.Logger
	tick     time.Duration
	start    time.Time
	end      time.Time
	curve    Curve
	progress io.Writer

	counters map[string]*counter  // by instance
	noticed  map[string]time.Time // instance → when its reclaim notice came
	reclaims int
	lastBar  time.Time
}

// counter is one replica's monotonic token and request counters.
type counter struct {
	prompt, gen, req float64
	at               time.Time
}

// stepper is the arbiter as the driver steps it: one round at the clock's time, and a wait until
// what was published is folded, so the next round sees it whatever the bus's speed.
type stepper interface {
	Step(ctx context.Context)
	AwaitNotices(ctx context.Context, ids []string) error
	AwaitFolded(ctx context.Context) error
}

// run drives the world tick by tick until the trace ends or ctx does: the clock moves to the
// tick, the arbiter plays its round, the zones' capacity takes what it lost, and the ready
// replicas report their tokens.
func (d *driver) run(ctx context.Context) error {
	for now := d.start; now.Before(d.end); now = now.Add(d.tick) {
		if err := ctx.Err(); err != nil {
			return err
		}
		d.clk.Set(now)
		if err := d.svc.AwaitFolded(ctx); err != nil {
			return err
		}
		d.svc.Step(ctx)
		obs, err := d.step(ctx, now)
		if err != nil {
			return err
		}
		d.bar(now, obs, false)
	}
	d.bar(d.end, nil, true)
	return nil
}

// step publishes the notices of the capacity the zones lost and the tick's token counters.
func (d *driver) step(ctx context.Context, now time.Time) ([]actuate.Observed, error) {
	if err := d.enforce(ctx); err != nil {
		return nil, err
	}
	obs, err := d.fleet.Observe(ctx)
	if err != nil {
		return nil, err
	}
	if err := d.tokens(ctx, now, obs); err != nil {
		return nil, err
	}
	return obs, nil
}

// enforce publishes the reclaim notices of the capacity the zones lost and waits until the
// arbiter has them: the sim fleet follows the trace's capacity itself (instances beyond it are
// reclaimed with the provider's notice, launches beyond it stay pending), so every reclaim is a
// real capacity loss.
func (d *driver) enforce(ctx context.Context) error {
	due, err := d.fleet.Notify(ctx, d.pub, d.svc.AwaitNotices)
	for _, e := range due {
		d.noticed[e.Instance] = e.NoticeAt
		d.reclaims++
	}
	return err
}

// tokens publishes each ready replica's counters, its share of what its workload served.
func (d *driver) tokens(ctx context.Context, now time.Time, obs []actuate.Observed) error {
	ready := map[string]int{}
	for _, o := range obs {
		ready[o.Workload] += len(o.Instances)
	}
	for _, o := range obs {
		w, ok := d.cfg.Workload(o.Workload)
		if !ok {
			continue
		}
		tokPerS := d.served(w, now, ready[o.Workload]) / float64(max(ready[o.Workload], 1))
		for _, inst := range o.Instances {
			c, seen := d.counters[inst]
			if !seen {
				c = &counter{at: now}
				d.counters[inst] = c
			}
			dt := now.Sub(c.at).Seconds()
			c.at = now
			c.prompt += tokPerS * dt * promptShare
			c.gen += tokPerS * dt * (1 - promptShare)
			c.req += tokPerS * dt / tokensPerRequest
			e := &events.TokensSample{Meta: events.Meta{At: now}, Location: o.Location, Workload: o.Workload,
				Replica: inst, Server: "other", PromptTokens: int64(c.prompt), GenerationTokens: int64(c.gen),
				Requests: int64(c.req)}
			if _, err := d.pub.PublishAsync(e); err != nil {
				return err
			}
		}
	}
	fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return d.pub.Flush(fctx)
}

// served is the tokens per second a workload's ready replicas serve now.
func (d *driver) served(w *fleet.Workload, now time.Time, ready int) float64 {
	s := w.Scaling
	per := s.PerReplica
	if per <= 0 {
		per = 1
	}
	load := d.curve.At(now.Sub(d.start)) * peakReplicas * float64(w.Replicas.Min) * per
	load = math.Min(load, float64(ready)*headroom*per)
	switch s.Metric {
	case fleet.MetricTokens:
		return load
	case fleet.MetricRequests:
		return load * tokensPerRequest
	}
	return load / per * 1000 // a replica's worth of a utilization target: 1000 tokens/s
}

// bar redraws the progress line on stderr, at most every 100 ms.
func (d *driver) bar(now time.Time, obs []actuate.Observed, final bool) {
	if d.progress == nil || (!final && time.Since(d.lastBar) < 100*time.Millisecond) {
		return
	}
	d.lastBar = time.Now()
	total, done := d.end.Sub(d.start), now.Sub(d.start)
	frac := math.Min(1, float64(done)/float64(total))
	const width = 30
	full := int(frac * width)
	spot, od := 0, 0
	for _, o := range obs {
		if o.Market == events.Spot {
			spot += o.Ready
		} else {
			od += o.Ready
		}
	}
	line := fmt.Sprintf("\rreplaying %s%s %3.0f%%  %s of %s trace time · ready: %d spot, %d on-demand · reclaims: %d ",
		strings.Repeat("█", full), strings.Repeat("░", width-full), frac*100, short(done), short(total), spot, od, d.reclaims)
	if final {
		line = fmt.Sprintf("\rreplayed  %s 100%%  %s of trace time · reclaims: %d%s\n",
			strings.Repeat("█", width), short(total), d.reclaims, strings.Repeat(" ", 30))
	}
	fmt.Fprint(d.progress, line)
}

// short prints a duration as 4h05m.
func short(d time.Duration) string {
	d = d.Round(time.Minute)
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}
