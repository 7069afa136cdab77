package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
)

// TestReplayRecordsAPriceSpike replays a steady market through the service at 5-minute ticks,
// past the anomaly detector's two days of learning, then triples the spot price: the replay's
// own bus must hold the cost.anomaly the watcher opens on the workload, within 10 minutes of the
// spike, explained by the spot series. The watcher has no timer in a replay; only the replay's
// rounds tick it.
func TestReplayRecordsAPriceSpike(t *testing.T) {
	const tick = 5 * time.Minute
	spikeAt := int(50 * time.Hour / tick)
	rules := Rules{Target: 3, Extra: 1, ColdStart: 1, Window: spikeAt + 6, ODRatio: 3, Tick: tick}
	zones := []string{"a", "b", "c"}
	caps := make([][]int, rules.Window)
	for i := range caps {
		caps[i] = []int{4, 4, 4}
	}
	pol, err := ServicePolicy(newSingle)(Env{Zones: zones, Rules: rules, Capacity: caps})
	if err != nil {
		t.Fatal(err)
	}
	p := pol.(*service)
	defer func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	}()
	obs := Observation{Zones: zones, Rules: rules}
	spike := bursarEpoch.Add(time.Duration(spikeAt) * tick)
	for i := range rules.Window {
		if i == spikeAt {
			p.clk.Set(spike)
			if err := PublishPrices(p.ctx, p.pub, spike, p.locs[:len(zones)], 3, rules.ODRatio); err != nil {
				t.Fatal(err)
			}
			if err := p.h.(*single).sys.Service.AwaitFolded(p.ctx); err != nil {
				t.Fatal(err)
			}
		}
		obs.Tick = i
		p.Decide(&obs)
	}
	// The watcher samples the spend at the end of each 5-minute step (the first round at or
	// after it) and dates it at the step's start: the spike, sampled at 50 h, opens at 49:55.
	var opened *events.CostAnomaly
	for _, e := range anomalies(t, p.h.(*single).in.JS) {
		if e.State == "open" {
			if e.Start.Before(spike.Add(-tick)) {
				t.Errorf("an anomaly opened before the spike: %+v", e)
			}
			if e.Series == "workload="+bursarWorkload && opened == nil {
				opened = e
			}
		}
	}
	if opened == nil {
		t.Fatal("the replay recorded no anomaly opened on the workload after the spike")
	}
	if d := opened.At.Sub(spike); d > 10*time.Minute {
		t.Errorf("the anomaly was published %s after the spike, want within 10 minutes", d)
	}
	if opened.Observed < 2*opened.Expected {
		t.Errorf("observed %.2f $/h against %.2f expected: want the tripled price's spend", opened.Observed, opened.Expected)
	}
	if len(opened.Moved) == 0 {
		t.Fatal("the anomaly names no series that moved")
	}
	for _, m := range opened.Moved {
		if !strings.Contains(m, "market=spot") {
			t.Errorf("moved %q: want the spot series whose price rose", m)
		}
	}
}

// anomalies reads every cost.anomaly event on js's FLEET stream, in order.
func anomalies(t *testing.T, js jetstream.JetStream) []*events.CostAnomaly {
	t.Helper()
	var out []*events.CostAnomaly
	for _, e := range bustest.Events(t, js, bus.Fleet, "bursar.anomaly.>") {
		out = append(out, e.(*events.CostAnomaly))
	}
	return out
}
