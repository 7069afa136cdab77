package recorder

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/events/eventstest"
)

var at = time.Date(2026, 11, 30, 6, 0, 0, 123456789, time.UTC)

func encoded(t testing.TB, e events.Event) []byte {
	t.Helper()
	b, err := events.Encode(e)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameSubject returns n samples of type t on one subject: one node's GPUs, one workload's replicas.
func sameSubject(t events.Type, n int) []events.Event {
	var out []events.Event
	for i := range n {
		for _, e := range eventstest.Samples(at, i) {
			if e.EventType() == t {
				out = append(out, e)
			}
		}
	}
	return out
}

// The fast path must actually take the samples and batches producers send, and agree with
// events.DecodeAll.
func TestFastDecodeTakesPlainSamplesAndBatches(t *testing.T) {
	for _, typ := range []events.Type{events.TypeGPUSample, events.TypeTokensSample} {
		evs := sameSubject(typ, 5)
		t.Run(string(typ)+"/single", func(t *testing.T) {
			d := newDecoder()
			if _, ok := d.whole(typ, encoded(t, evs[0])); !ok {
				t.Errorf("fast path refused a plain %s", typ)
			}
			got, err := d.decodeAll(typ, encoded(t, evs[0]))
			if err != nil || !reflect.DeepEqual(got, evs[:1]) {
				t.Errorf("decodeAll = %+v, %v; want %+v", got, err, evs[:1])
			}
		})
		t.Run(string(typ)+"/batch", func(t *testing.T) {
			d := newDecoder()
			data := eventstest.Batch(t, evs)
			if _, ok := d.batch(typ, data); !ok {
				t.Errorf("fast path refused a plain batch: %s", data)
			}
			got, err := d.decodeAll(typ, data)
			if err != nil || !reflect.DeepEqual(got, evs) {
				t.Errorf("decodeAll = %+v, %v; want %+v", got, err, evs)
			}
		})
	}
}

func TestDecodeRejectsWhatEventsRejects(t *testing.T) {
	good := string(encoded(t, eventstest.Samples(at, 1)[2]))
	gpus := sameSubject(events.TypeGPUSample, 3)
	batch := string(eventstest.Batch(t, gpus))
	tests := []struct {
		name string
		data string
		was  string
	}{
		{"wrong type for subject", strings.Replace(good, `"gpu.sample"`, `"tokens.sample"`, 1), good},
		{"utilization out of range", strings.Replace(good, `"utilization_pct":87.5`, `"utilization_pct":187.5`, 1), good},
		{"missing field", strings.Replace(good, `"power_w":612.3,`, ``, 1), good},
		{"version 2", strings.Replace(good, `"version":"1.0"`, `"version":"2.0"`, 1), good},
		{"not json", `{"type":"gpu.sample"`, good},
		{"an event of a batch out of range", strings.Replace(batch, `"utilization_pct":87.5`, `"utilization_pct":187.5`, 1), batch},
		{"a batch id not derived from its events", strings.Replace(batch, `"id":"`, `"id":"0`, 1), batch},
		{"an event of a batch repeated", strings.Replace(batch, gpus[2].Header().ID, gpus[1].Header().ID, 1), batch},
		{"a batch of major version 2", strings.Replace(batch, `"version":"1.0","id"`, `"version":"2.0","id"`, 1), batch},
		{"a batch's events not closed", strings.TrimSuffix(batch, "]}") + "}", batch},
		{"an empty batch", batch[:strings.Index(batch, "[")+1] + "]}", batch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.data == tc.was {
				t.Fatal("test input did not change")
			}
			evs, err := newDecoder().decodeAll(events.TypeGPUSample, []byte(tc.data))
			if err == nil && evs[0].EventType() == events.TypeGPUSample {
				t.Errorf("decodeAll accepted %s", tc.data)
			}
		})
	}
}

func FuzzFastDecode(f *testing.F) {
	for i, e := range eventstest.Samples(at, 3) {
		if t := e.EventType(); t == events.TypeGPUSample || t == events.TypeTokensSample {
			f.Add(uint8(i), encoded(f, e))
			f.Add(uint8(i), eventstest.Batch(f, sameSubject(t, 3)))
		}
	}
	f.Add(uint8(3), []byte(`{"type":"tokens.sample","reset":true,"Location":"x"}`))
	f.Add(uint8(2), []byte(`{"type":"batch","version":"1","id":"x","event_type":"gpu.sample","events":[{}]}`))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		d := newDecoder()
		typ := events.TypeGPUSample
		if which%2 == 1 {
			typ = events.TypeTokensSample
		}
		var fast []events.Event
		if bytes.HasPrefix(data, batchPrefix) {
			evs, ok := d.batch(typ, data)
			if !ok {
				return
			}
			fast = evs
		} else {
			e, ok := d.whole(typ, data)
			if !ok {
				return
			}
			fast = []events.Event{e}
		}
		slow, err := events.DecodeAll(data)
		if err != nil {
			t.Fatalf("fast path accepted what events.DecodeAll rejects (%v): %q", err, data)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("fast path decoded %+v, events.DecodeAll %+v, from %q", fast, slow, data)
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	for _, typ := range []events.Type{events.TypeGPUSample, events.TypeTokensSample} {
		evs := sameSubject(typ, 128)
		for _, in := range []struct {
			name string
			data []byte
			n    int
		}{{"single", encoded(b, evs[0]), 1}, {fmt.Sprintf("batch%d", len(evs)), eventstest.Batch(b, evs), len(evs)}} {
			d := newDecoder()
			b.Run(string(typ)+"/"+in.name+"/fast", func(b *testing.B) {
				for b.Loop() {
					if _, err := d.decodeAll(typ, in.data); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*in.n), "ns/event")
			})
			b.Run(string(typ)+"/"+in.name+"/events.DecodeAll", func(b *testing.B) {
				for b.Loop() {
					if _, err := events.DecodeAll(in.data); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*in.n), "ns/event")
			})
		}
	}
}
