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

func TestDecodeAllRejects(t *testing.T) {
	set := func(k string, v any) func(map[string]any, []any) {
		return func(m map[string]any, _ []any) { m[k] = v }
	}
	inEvent := func(i int, k string, v any) func(map[string]any, []any) {
		return func(_ map[string]any, evs []any) { evs[i].(map[string]any)[k] = v }
	}
	other := encoded(t, eventstest.Sweep("node-b", 1, at)[0])
	var otherNode map[string]any
	if err := json.Unmarshal(other, &otherNode); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		change    func(map[string]any, []any)
		wantErr   error
		wantField string
	}{
		{"missing event_type", func(m map[string]any, _ []any) { delete(m, "event_type") }, events.ErrMissingField, "event_type"},
		{"unknown event_type", set("event_type", "gpu.guessed"), events.ErrUnknownType, "event_type"},
		{"event_type not a string", set("event_type", 3), events.ErrMalformed, "event_type"},
		{"batch major version 2", set("version", "2.0"), events.ErrVersion, "version"},
		{"missing version", func(m map[string]any, _ []any) { delete(m, "version") }, events.ErrMissingField, "version"},
		{"missing id", func(m map[string]any, _ []any) { delete(m, "id") }, events.ErrMissingField, "id"},
		{"id not derived from the events", set("id", "0123"), events.ErrOutOfRange, "id"},
		{"missing events", func(m map[string]any, _ []any) { delete(m, "events") }, events.ErrMissingField, "events"},
		{"null events", set("events", nil), events.ErrMissingField, "events"},
		{"events not an array", set("events", map[string]any{}), events.ErrMalformed, "events"},
		{"no events", set("events", []any{}), events.ErrOutOfRange, "events"},
		{"an event out of range", inEvent(1, "utilization_pct", 101), events.ErrOutOfRange, "events[1].utilization_pct"},
		{"an event missing a field", func(_ map[string]any, evs []any) { delete(evs[2].(map[string]any), "uuid") },
			events.ErrMissingField, "events[2].uuid"},
		{"an event not an object", func(_ map[string]any, evs []any) { evs[0] = "gpu" }, events.ErrMalformed, "events[0]"},
		{"an event of another type", set("event_type", "tokens.sample"), events.ErrOutOfRange, "events[0].type"},
		{"an event repeated", func(_ map[string]any, evs []any) { evs[2] = evs[0] }, events.ErrOutOfRange, "events[2].id"},
		{"an event of another subject", func(_ map[string]any, evs []any) { evs[1] = otherNode }, events.ErrOutOfRange, "events[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := events.DecodeAll(editBatch(t, tt.change))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("DecodeAll error = %v, want %v", err, tt.wantErr)
			}
			var ee *events.Error
			if !errors.As(err, &ee) {
				t.Fatalf("error %T is not *events.Error", err)
			}
			if ee.Field != tt.wantField {
				t.Errorf("Field = %q, want %q (error: %v)", ee.Field, tt.wantField, err)
			}
			if !strings.Contains(err.Error(), tt.wantField) {
				t.Errorf("error %q does not name %q", err, tt.wantField)
			}
		})
	}
}

func TestDecodeAllReadsABatchWrittenAnotherWay(t *testing.T) {
	evs := eventstest.Sweep("node-a", 2, at)
	tests := []struct {
		name string
		data []byte
	}{
		{"keys in another order, newer minor version, unknown field",
			editBatch(t, func(m map[string]any, _ []any) { m["version"] = "1.3"; m["producer"] = "x" })},
		{"leading whitespace", append([]byte(" \n"), eventstest.Batch(t, evs)...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := events.DecodeAll(tt.data); err != nil {
				t.Fatalf("DecodeAll(%s): %v", tt.data, err)
			}
		})
	}
}

func TestDecodeAllMalformedDocuments(t *testing.T) {
	for _, in := range []string{"", "null", "[]", "{", `{"type":"batch"`, `{"type":"batch"}`,
		`{"type":"batch","version":"1.0","id":"x","event_type":"gpu.sample","events":[null]}`,
		`{"type":"batch","version":"1.0","id":"x","event_type":"gpu.sample","events":"[]"}`,
		`{"version":"1.0","type":"batch","type":"gpu.sample"}`, "\x00\xff"} {
		if evs, err := events.DecodeAll([]byte(in)); err == nil {
			t.Errorf("DecodeAll(%q) = %v, want an error", in, evs)
		}
	}
}

func FuzzDecodeAll(f *testing.F) {
	for _, e := range eventstest.Samples(at, 1) {
		f.Add(encoded(f, e))
	}
	f.Add(eventstest.Batch(f, eventstest.Sweep("node-a", 3, at)))
	f.Add([]byte(`{"type":"batch","version":"1","id":"x","event_type":"gpu.sample","events":[{}]}`))
	f.Add([]byte(`{"event_type":"tokens.sample","type":"batch"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		evs, err := events.DecodeAll(data)
		if err != nil {
			return
		}
		if len(evs) == 0 {
			t.Fatal("DecodeAll succeeded with no events")
		}
		if one, err := events.Decode(data); err == nil && (len(evs) != 1 || !reflect.DeepEqual(one, evs[0])) {
			t.Fatalf("DecodeAll and Decode disagree on a single event")
		}
		// What decodes must encode again, into messages that decode to the same events.
		msgs, err := events.Batches(evs, events.BatchLimits{MaxEvents: len(evs), MaxBytes: 1 << 30})
		if err != nil {
			t.Fatalf("decoded events do not encode: %v", err)
		}
		if len(msgs) != 1 {
			t.Fatalf("events of one message made %d messages", len(msgs))
		}
		again, err := events.DecodeAll(msgs[0].Data)
		if err != nil {
			t.Fatalf("re-encoded message does not decode: %v\n%s", err, msgs[0].Data)
		}
		if len(again) != len(evs) || msgID(again) != msgID(evs) {
			t.Fatalf("second round trip changed the events")
		}
	})
}
