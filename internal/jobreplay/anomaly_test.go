package jobreplay

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/replay"
)

// spiking is the live service with the spot price tripled from second at of the window on.
type spiking struct {
	*service
	at  int64
	err error
}

func (s *spiking) Decide(v *View) Choice {
	if v.T == s.at && s.err == nil {
		at := serviceEpoch.Add(time.Duration(v.T) * time.Second)
		s.moveTo(at)
		if s.err = replay.PublishPrices(s.ctx, s.pub, at, s.locs, 3*s.set.SpotPrice, s.set.ODPrice); s.err == nil {
			s.err = s.svc.AwaitFolded(s.ctx)
		}
	}
	return s.service.Decide(v)
}

// TestJobReplayRecordsAPriceSpike runs a job on steady spot through the live service past the
// anomaly detector's two days of learning, then triples the spot price: the job replay's bus
// must hold the cost.anomaly the watcher opens on the job at the spike, though the replay's
// ticks are 10 minutes long. The watcher has no timer in a replay; only the replay ticks it.
func TestJobReplayRecordsAPriceSpike(t *testing.T) {
	set := Setting{Tick: 600, Work: 51 * 3600, Deadline: 60 * 3600, Overhead: 180, SpotPrice: RefSpotPrice, ODPrice: RefODPrice}
	avail := make([][]bool, (set.Deadline+4*3600)/set.Tick)
	for k := range avail {
		avail[k] = []bool{true}
	}
	p, err := newService(Env{Setting: set, Zones: []string{"us-west-2a"}})
	if err != nil {
		t.Fatal(err)
	}
	s := &spiking{service: p.(*service), at: 50 * 3600}
	out, err := Simulate(set, avail, s)
	var got []*events.CostAnomaly
	if s.err == nil && err == nil {
		got = anomalies(t, s.in.JS) // before Close removes the bus
	}
	if cerr := s.Close(); cerr != nil {
		t.Fatalf("the live service: %v", cerr)
	}
	if err != nil || s.err != nil {
		t.Fatalf("simulate: %v; the spike: %v", err, s.err)
	}
	if !out.Met {
		t.Fatalf("outcome %+v: want the deadline met", out)
	}
	spike := serviceEpoch.Add(time.Duration(s.at) * time.Second)
	var opened *events.CostAnomaly
	for _, e := range got {
		if e.State == "open" && e.Series == "workload="+serviceJob && opened == nil {
			opened = e
		}
	}
	if opened == nil {
		t.Fatalf("no anomaly opened on the job; the replay recorded %d anomaly events", len(got))
	}
	// The watcher samples the spend at each 5-minute step's end and dates it at the step's
	// start: the spike, sampled at 50 h, opens at 49:55 and is published at 50 h. The step
	// ending at 49:55 is sampled then, with the spend before the spike.
	if want := spike.Add(-5 * time.Minute); !opened.Start.Equal(want) || !opened.At.Equal(spike) {
		t.Errorf("opened %+v: want it started at %s and published at %s", opened, want, spike)
	}
	if opened.Observed < 2*opened.Expected {
		t.Errorf("observed %.2f $/h against %.2f expected: want the tripled price's spend", opened.Observed, opened.Expected)
	}
}

// anomalies reads every cost.anomaly event on js's FLEET stream, in order.
func anomalies(t *testing.T, js jetstream.JetStream) []*events.CostAnomaly {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cons, err := js.OrderedConsumer(ctx, bus.Fleet, jetstream.OrderedConsumerConfig{FilterSubjects: []string{"bursar.anomaly.>"}})
	if err != nil {
		t.Fatal(err)
	}
	n := int(cons.CachedInfo().NumPending)
	var out []*events.CostAnomaly
	for n > 0 {
		batch, err := cons.Fetch(n, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range batch.Messages() {
			e, err := events.Decode(m.Data())
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, e.(*events.CostAnomaly))
			n--
		}
		if batch.Error() != nil {
			t.Fatal(batch.Error())
		}
	}
	return out
}
