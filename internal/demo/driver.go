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
	"github.com/bursar-dev/bursar/internal/serving"
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
	traffic  map[string]traffic // by workload
	gpus     map[string]string  // instance type → GPU model
	progress io.Writer
	// anomalies is the cost anomaly watcher (system.System.Anomalies). It has no timer on a
	// stepped system: each round ticks it, and it observes each 5 minutes of the clock once, as
	// under arbiter run. It publishes nothing before two days of history (anomaly.Config.Learn).
	anomalies interface{ Tick(ctx context.Context) }

	counters map[string]*counter  // by instance
	noticed  map[string]time.Time // instance → when its reclaim notice came
	reclaims int
	served   map[string]*servedStat // by workload
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
		d.anomalies.Tick(ctx)
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

// tokens serves each workload's demand of the tick with its ready replicas and publishes each
// replica's counters: its share of what its workload served, in proportion to its rate.
func (d *driver) tokens(ctx context.Context, now time.Time, obs []actuate.Observed) error {
	tick := int(now.Sub(d.start) / d.tick)
	for i := range d.cfg.Workloads {
		w := &d.cfg.Workloads[i]
		t, ok := d.traffic[w.Name]
		if !ok {
			continue
		}
		var reps []replica
		capacity := 0.0
		for _, o := range obs {
			if o.Workload != w.Name {
				continue
			}
			rate := d.rate(w, o.Offer)
			for _, inst := range o.Instances {
				reps = append(reps, replica{id: inst, location: o.Location, rate: rate})
				capacity += rate
			}
		}
		demand := t.at(tick)
		frac := d.stat(w.Name).add(t.rate(demand), capacity)
		for _, r := range reps {
			if err := d.publish(now, w.Name, r, demand, frac*r.rate/capacity); err != nil {
				return err
			}
		}
	}
	fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return d.pub.Flush(fctx)
}

// replica is one ready replica and what it serves at its latency target.
type replica struct {
	id, location string
	rate         float64
}

// rate is what one replica of w on offer serves; where the offer's GPU model is not known, the
// lowest rate w states, so a replica of an unknown model never serves more than it could.
func (d *driver) rate(w *fleet.Workload, offer string) float64 {
	if r, ok := w.RateFor(offerGPU(d.gpus, offer)); ok {
		return r
	}
	return w.Scaling.PerReplica
}

func (d *driver) stat(workload string) *servedStat {
	s := d.served[workload]
	if s == nil {
		s = &servedStat{}
		d.served[workload] = s
	}
	return s
}

// publish adds share of the minute's demand m to replica r's counters, over the time since its
// last sample, and publishes them.
func (d *driver) publish(now time.Time, workload string, r replica, m serving.Minute, share float64) error {
	c, seen := d.counters[r.id]
	if !seen {
		c = &counter{at: now}
		d.counters[r.id] = c
	}
	part := now.Sub(c.at).Minutes() * share // of the minute's demand
	c.at = now
	c.prompt += m.Input * part
	c.gen += m.Output * part
	c.req += m.Requests * part
	e := &events.TokensSample{Meta: events.Meta{At: now}, Location: r.location, Workload: workload,
		Replica: r.id, Server: "other", PromptTokens: int64(c.prompt), GenerationTokens: int64(c.gen),
		Requests: int64(c.req)}
	_, err := d.pub.PublishAsync(e)
	return err
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
