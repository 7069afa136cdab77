package collect

import (
	"context"
	"reflect"
	"testing"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/bus/bustest"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/pricesource"
)

// TestASnapshotGoesOutAsOneBatchPerRegion: a catalog's offers are published together, one
// batch message per provider and region, and decode back to the events of the offers.
func TestASnapshotGoesOutAsOneBatchPerRegion(t *testing.T) {
	env := bustest.Start(t)
	c := New(bus.NewPublisher(env.JS), quiet(), nil)
	src := &pricesource.SkyPilotFiles{Paths: []string{catalogCopy(t, 40)}}
	n, err := c.RunOnce(context.Background(), Job{Source: src}, t0, true)
	if err != nil {
		t.Fatal(err)
	}
	cat, _ := c.Catalog(src.Name())
	want := map[string]events.Event{}
	subjects := map[string]bool{}
	for _, o := range cat.Offers {
		e := events.Stamp(Event(o))
		want[e.Header().ID] = e
		subjects[e.Subject()] = true
	}
	msgs := marketMessages(t, env.JS)
	if len(subjects) < 2 || len(msgs) != len(subjects) {
		t.Fatalf("%d offers in %d regions went out in %d messages, want one per region", n, len(subjects), len(msgs))
	}
	got := 0
	for _, m := range msgs {
		evs, err := events.DecodeAll(m)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if !reflect.DeepEqual(e, want[e.Header().ID]) {
				t.Errorf("decoded %+v, want %+v", e, want[e.Header().ID])
			}
			got++
		}
	}
	if got != len(want) || got != n {
		t.Errorf("the batches hold %d events, want the %d offers (published %d)", got, len(want), n)
	}
}
