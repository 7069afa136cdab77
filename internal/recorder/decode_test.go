package recorder

import (
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

// The fast path must actually take the samples producers send, and agree with events.Decode.
func TestFastDecodeTakesPlainSamples(t *testing.T) {
	d := newDecoder()
	for _, e := range eventstest.Samples(at, 7) {
		data := encoded(t, e)
		var ok bool
		switch e.EventType() {
		case events.TypeGPUSample:
			ok = d.gpu(data, &events.GPUSample{})
		case events.TypeTokensSample:
			ok = d.tokens(data, &events.TokensSample{})
		default:
			continue
		}
		if !ok {
			t.Errorf("fast path refused a plain %s: %s", e.EventType(), data)
		}
		got, err := d.decode(e.EventType(), data)
		if err != nil || !reflect.DeepEqual(got, e) {
			t.Errorf("decode(%s) = %+v, %v; want %+v", e.EventType(), got, err, e)
		}
	}
}

func TestDecodeRejectsWhatEventsRejects(t *testing.T) {
	d := newDecoder()
	good := string(encoded(t, eventstest.Samples(at, 1)[2]))
	tests := []struct {
		name string
		data string
	}{
		{"wrong type for subject", strings.Replace(good, `"gpu.sample"`, `"tokens.sample"`, 1)},
		{"utilization out of range", strings.Replace(good, `"utilization_pct":87.5`, `"utilization_pct":187.5`, 1)},
		{"missing field", strings.Replace(good, `"power_w":612.3,`, ``, 1)},
		{"version 2", strings.Replace(good, `"version":"1.0"`, `"version":"2.0"`, 1)},
		{"not json", `{"type":"gpu.sample"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.data == good {
				t.Fatal("test input did not change")
			}
			if _, err := d.decode(events.TypeGPUSample, []byte(tc.data)); err == nil {
				t.Errorf("decode accepted %s", tc.data)
			}
		})
	}
}

func FuzzFastDecode(f *testing.F) {
	for i, e := range eventstest.Samples(at, 3) {
		if t := e.EventType(); t == events.TypeGPUSample || t == events.TypeTokensSample {
			f.Add(uint8(i), encoded(f, e))
		}
	}
	f.Add(uint8(3), []byte(`{"type":"tokens.sample","reset":true,"Location":"x"}`))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		d := newDecoder()
		var fast events.Event
		var ok bool
		if which%2 == 0 {
			g := &events.GPUSample{}
			ok, fast = d.gpu(data, g), g
		} else {
			s := &events.TokensSample{}
			ok, fast = d.tokens(data, s), s
		}
		if !ok || events.Validate(fast) != nil {
			return
		}
		slow, err := events.Decode(data)
		if err != nil {
			t.Fatalf("fast path accepted what events.Decode rejects (%v): %q", err, data)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("fast path decoded %+v, events.Decode %+v, from %q", fast, slow, data)
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	for _, e := range eventstest.Samples(at, 3)[2:4] {
		data := encoded(b, e)
		d := newDecoder()
		b.Run(string(e.EventType())+"/fast", func(b *testing.B) {
			for b.Loop() {
				if _, err := d.decode(e.EventType(), data); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(string(e.EventType())+"/events.Decode", func(b *testing.B) {
			for b.Loop() {
				if _, err := events.Decode(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
