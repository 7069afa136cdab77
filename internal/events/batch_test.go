package events_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/events/eventstest"
)

func TestBatchesGroupBySubjectAndDecodeBack(t *testing.T) {
	a, b := eventstest.Sweep("node-a", 8, at), eventstest.Sweep("node-b", 3, at)
	lone := eventstest.Samples(at, 1)[0] // a price, alone on its subject
	in := []events.Event{a[0], b[0], a[1], lone}
	in = append(append(in, a[2:]...), b[1:]...)
	msgs, err := events.Batches(in, events.BatchLimits{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		wantSubject string
		want        []events.Event
	}{
		{"first subject first, events in order", "bursar.gpu.aws-use1.node-a", a},
		{"second subject", "bursar.gpu.aws-use1.node-b", b},
		{"an event alone goes as itself", lone.Subject(), []events.Event{lone}},
	}
	if len(msgs) != len(tests) {
		t.Fatalf("got %d messages, want %d", len(msgs), len(tests))
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := msgs[i]
			if m.Subject != tt.wantSubject || m.Events != len(tt.want) {
				t.Errorf("message on %s with %d events, want %s with %d", m.Subject, m.Events, tt.wantSubject, len(tt.want))
			}
			got, err := events.DecodeAll(m.Data)
			if err != nil {
				t.Fatalf("DecodeAll: %v\n%s", err, m.Data)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("DecodeAll gave\n%v\nwant\n%v", got, tt.want)
			}
			if wantID := msgID(tt.want); m.ID != wantID {
				t.Errorf("message id %s, want %s", m.ID, wantID)
			}
		})
	}
}

// msgID is the Nats-Msg-Id a message of evs must carry: the event's own id when alone.
func msgID(evs []events.Event) string {
	if len(evs) == 1 {
		return evs[0].Header().ID
	}
	ids := make([]string, len(evs))
	for i, e := range evs {
		ids[i] = e.Header().ID
	}
	return events.BatchID(ids)
}

func TestBatchesChunkWithinLimits(t *testing.T) {
	evs := eventstest.Sweep("node-a", 10, at)
	one := len(eventstest.Batch(t, evs[:1]))
	tests := []struct {
		name       string
		lim        events.BatchLimits
		wantCounts []int
	}{
		{"defaults hold a sweep", events.BatchLimits{}, []int{10}},
		{"by events", events.BatchLimits{MaxEvents: 4}, []int{4, 4, 2}},
		{"by bytes", events.BatchLimits{MaxBytes: 3*one + 200}, []int{3, 3, 3, 1}},
		{"smaller than one event", events.BatchLimits{MaxBytes: 10}, []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs, err := events.Batches(evs, tt.lim)
			if err != nil {
				t.Fatal(err)
			}
			var counts []int
			var back []events.Event
			for _, m := range msgs {
				counts = append(counts, m.Events)
				if m.Events > 1 && tt.lim.MaxBytes > 0 && len(m.Data) > tt.lim.MaxBytes {
					t.Errorf("a batch of %d bytes, over the limit of %d", len(m.Data), tt.lim.MaxBytes)
				}
				got, err := events.DecodeAll(m.Data)
				if err != nil {
					t.Fatal(err)
				}
				back = append(back, got...)
			}
			if !reflect.DeepEqual(counts, tt.wantCounts) {
				t.Errorf("chunks of %v events, want %v", counts, tt.wantCounts)
			}
			if !reflect.DeepEqual(back, evs) {
				t.Error("the chunks do not decode back to the events in order")
			}
		})
	}
}

func TestBatchesSendARepeatedEventOnce(t *testing.T) {
	evs := eventstest.Sweep("node-a", 3, at)
	msgs, err := events.Batches(append(evs, evs[1]), events.BatchLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || msgs[0].Events != 3 {
		t.Fatalf("got %+v, want one batch of the 3 distinct events", msgs)
	}
}

func TestBatchesNameTheInvalidEvent(t *testing.T) {
	evs := eventstest.Sweep("node-a", 3, at)
	evs[2].(*events.GPUSample).UtilizationPct = 120
	_, err := events.Batches(evs, events.BatchLimits{})
	if !errors.Is(err, events.ErrOutOfRange) || !strings.Contains(err.Error(), "event 2") ||
		!strings.Contains(err.Error(), "utilization_pct") {
		t.Fatalf("Batches error = %v, want event 2's utilization_pct out of range", err)
	}
}

func TestDecodeAllReadsASingleEventAsOne(t *testing.T) {
	for _, e := range eventstest.Samples(at, 2) {
		got, err := events.DecodeAll(encoded(t, e))
		if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], e) {
			t.Errorf("DecodeAll(%s) = %v, %v; want [%v]", e.EventType(), got, err, e)
		}
	}
}

func encoded(t testing.TB, e events.Event) []byte {
	t.Helper()
	data, err := events.Encode(e)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// editBatch decodes a batch of a 3-GPU sweep into a map, applies f and re-encodes it.
func editBatch(t *testing.T, f func(m map[string]any, evs []any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(eventstest.Batch(t, eventstest.Sweep("node-a", 3, at)), &m); err != nil {
		t.Fatal(err)
	}
	evs, _ := m["events"].([]any)
	f(m, evs)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
