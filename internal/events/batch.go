package events

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// TypeBatch is the type of a batch envelope: one message carrying many events. It is not an
// event type (it is not in Types, and Decode refuses it); DecodeAll reads it.
const TypeBatch Type = "batch"

// BatchVersion is the batch envelope's schema version this binary writes. Like events, any minor
// version of major 1 is read.
const BatchVersion = "1.0"

// A batch envelope is
//
//	{"type":"batch","version":"1.0","id":"<BatchID of the events' ids>","event_type":"gpu.sample","events":[{...},{...}]}
//
// Its events are whole events, each with its own type, version, id and time, so consumers keep
// deduplicating per event (the recorder's tables are keyed by event id). A batch holds events
// of one type and one subject, and is published on that subject: every consumer's filter (a
// stream's subjects, the arbiter's follows, a partition's workloads, the collector's publish
// permissions) sees a batch exactly where it would have seen its events, and the recorder
// inserts a batch into the one table of its type.

// DecodeAll parses one message: a single event gives a one-element slice, a batch its events in
// order. It refuses what Decode refuses; for an event inside a batch, the error's Field names its
// index, e.g. "events[3].utilization_pct". A batch must hold at least one event, all of its
// event_type and one subject, with distinct ids, and its id must be BatchID of their ids.
func DecodeAll(data []byte) ([]Event, error) {
	if evs := decodePlainBatch(data); evs != nil {
		return evs, nil
	}
	if !looksLikeBatch(data) {
		e, err := Decode(data)
		if err == nil {
			return []Event{e}, nil
		}
		if !errors.Is(err, ErrUnknownType) || !typeIsBatch(data) {
			return nil, err
		}
	}
	return decodeBatch(data)
}

// decodePlainBatch reads a batch as Batches writes it, in one pass: the envelope's members in
// their order, then each event as decodePlain reads a single one. It returns nil for anything
// else, even a valid batch, which decodeBatch then reads and explains; so it never accepts what
// decodeBatch refuses (FuzzDecodeAll compares both).
func decodePlainBatch(data []byte) []Event {
	if !bytes.HasPrefix(data, batchPrefix) {
		return nil
	}
	s := scanner{b: data, i: len(batchPrefix)}
	var head [4][]byte // version, id, event_type; events has no string value
	for i, name := range [...]string{"version", "id", "event_type", "events"} {
		if !s.byte(',') {
			return nil
		}
		if k, ok := s.key(); !ok || string(k) != name {
			return nil
		}
		if i < 3 {
			var ok bool
			if head[i], ok = s.str(); !ok {
				return nil
			}
		}
	}
	evs, ok := plainEvents(&s)
	if !ok || !s.byte('}') || !s.end() {
		return nil
	}
	if n, err := major(string(head[0])); err != nil || n != 1 {
		return nil
	}
	if CheckBatch(string(head[1]), Type(head[2]), evs) != nil {
		return nil
	}
	return evs
}

// plainEvents reads a non-empty array of events that decodePlain reads and Validate accepts.
func plainEvents(s *scanner) ([]Event, bool) {
	if !s.byte('[') {
		return nil, false
	}
	var evs []Event
	for {
		s.ws()
		end := objectEnd(s.b, s.i)
		if end < 0 {
			return nil, false
		}
		e := decodePlain(s.b[s.i:end])
		if e == nil || Validate(e) != nil {
			return nil, false
		}
		evs, s.i = append(evs, e), end
		if s.byte(']') {
			return evs, true
		}
		if !s.byte(',') {
			return nil, false
		}
	}
}

// objectEnd returns the index just past the object that starts at b[i], or -1: it matches
// braces outside strings and nothing more; decodePlain then reads the object.
func objectEnd(b []byte, i int) int {
	if i >= len(b) || b[i] != '{' {
		return -1
	}
	depth, inString := 0, false
	for j := i; j < len(b); j++ {
		switch c := b[j]; {
		case inString && c == '\\':
			j++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth--; depth == 0 {
				return j + 1
			}
		}
	}
	return -1
}

// batchPrefix is how every batch this package writes begins, so DecodeAll tells a batch from an
// event without parsing twice; a batch written another way is still read, after Decode refused
// its type.
var batchPrefix = []byte(`{"type":"batch"`)

func looksLikeBatch(data []byte) bool {
	return bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), batchPrefix)
}

func typeIsBatch(data []byte) bool {
	var raw map[string]json.RawMessage
	if json.Unmarshal(data, &raw) != nil {
		return false
	}
	var t string
	return decodeField(raw, "type", &t) == nil && Type(t) == TypeBatch
}

// decodeBatch reads the envelope, decodes every event and checks the batch.
func decodeBatch(data []byte) ([]Event, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, &Error{Type: TypeBatch, Err: ErrMalformed, Detail: err.Error()}
	}
	var typ, version, id, eventType string
	for _, f := range []struct {
		name string
		into *string
	}{{"type", &typ}, {"version", &version}, {"id", &id}, {"event_type", &eventType}} {
		if err := decodeField(raw, f.name, f.into); err != nil {
			err.Type = TypeBatch
			return nil, err
		}
	}
	if Type(typ) != TypeBatch { // a repeated "type" key: encoding/json reads the last one, as Decode does
		e, err := Decode(data)
		if err != nil {
			return nil, err
		}
		return []Event{e}, nil
	}
	if m, err := major(version); err != nil || m != 1 {
		return nil, &Error{Type: TypeBatch, Field: "version", Err: ErrVersion,
			Detail: fmt.Sprintf("got %q, this build reads batch major version 1", version)}
	}
	var elems []json.RawMessage
	if v, ok := raw["events"]; !ok || bytes.Equal(v, []byte("null")) {
		return nil, &Error{Type: TypeBatch, Field: "events", Err: ErrMissingField}
	} else if err := json.Unmarshal(v, &elems); err != nil {
		return nil, &Error{Type: TypeBatch, Field: "events", Err: ErrMalformed, Detail: "must be an array of events"}
	}
	evs := make([]Event, len(elems))
	for i, elem := range elems {
		e, err := Decode(elem)
		if err != nil {
			return nil, inBatch(i, err)
		}
		evs[i] = e
	}
	if err := CheckBatch(id, Type(eventType), evs); err != nil {
		return nil, err
	}
	return evs, nil
}

// inBatch returns err, the failure to decode the event at index i of a batch, with the index in
// its field ("events[3].utilization_pct"), so the error still says which event and field.
func inBatch(i int, err error) error {
	var ee *Error
	if !errors.As(err, &ee) {
		return &Error{Type: TypeBatch, Field: fmt.Sprintf("events[%d]", i), Err: ErrMalformed, Detail: err.Error()}
	}
	field := fmt.Sprintf("events[%d]", i)
	if ee.Field != "" {
		field += "." + ee.Field
	}
	return &Error{Type: ee.Type, Field: field, Err: ee.Err, Detail: ee.Detail}
}

// CheckBatch checks the rules of a batch whose events each decoded: at least one event, all of
// type t and of one subject, no id twice, and id equal to BatchID of their ids. DecodeAll applies
// it; a consumer that decodes batches its own way must apply it too.
func CheckBatch(id string, t Type, evs []Event) error {
	fail := func(field string, sentinel error, format string, args ...any) error {
		return &Error{Type: TypeBatch, Field: field, Err: sentinel, Detail: fmt.Sprintf(format, args...)}
	}
	if New(t) == nil {
		return &Error{Type: TypeBatch, Field: "event_type", Err: ErrUnknownType, Detail: strconv.Quote(string(t))}
	}
	if len(evs) == 0 {
		return fail("events", ErrOutOfRange, "a batch must hold at least one event")
	}
	seen := make(map[string]int, len(evs))
	ids := make([]string, len(evs))
	for i, e := range evs {
		at := func(f string) string { return fmt.Sprintf("events[%d]%s", i, f) }
		if e.EventType() != t {
			return fail(at(".type"), ErrOutOfRange, "must be the batch's event_type %q, got %q", t, e.EventType())
		}
		ids[i] = e.Header().ID
		if j, dup := seen[ids[i]]; dup {
			return fail(at(".id"), ErrOutOfRange, "repeats events[%d]'s id %s: a batch holds each event once", j, ids[i])
		}
		seen[ids[i]] = i
		if i > 0 && !sameSubject(evs[0], e) {
			return fail(at(""), ErrOutOfRange, "its subject %s is not the batch's %s: a batch holds events of one subject",
				e.Subject(), evs[0].Subject())
		}
	}
	if want := BatchID(ids); id != want {
		return fail("id", ErrOutOfRange, "must be derived from the events' ids (%s), got %q", want, id)
	}
	return nil
}

// sameSubject reports whether a and b are published on one subject. The telemetry types, which
// make most batches, first compare the fields their subject is made of, without building it.
func sameSubject(a, b Event) bool {
	switch a := a.(type) {
	case *GPUSample:
		if b, ok := b.(*GPUSample); ok && a.Location == b.Location && a.Node == b.Node {
			return true
		}
	case *TokensSample:
		if b, ok := b.(*TokensSample); ok && a.Location == b.Location && a.Workload == b.Workload {
			return true
		}
	}
	return a.Subject() == b.Subject()
}

// BatchID derives a batch's id from its events' ids, in order. It is the batch message's
// Nats-Msg-Id, so a batch published again (a retried sweep) is dropped by JetStream's duplicate
// window as a single event would be.
func BatchID(ids []string) string {
	h := sha256.New()
	h.Write([]byte(TypeBatch))
	for _, id := range ids {
		h.Write([]byte{0})
		h.Write([]byte(id))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
