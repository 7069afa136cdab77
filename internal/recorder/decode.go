package recorder

import (
	"bytes"

	"github.com/bursar-dev/bursar/internal/events"
)

// decoder turns message payloads into events. GPU and token samples, the bulk of the traffic,
// take a fast path without reflection, alone or in a batch; it accepts only plain input (each
// known key once, strings without escapes, numbers as encoding/json reads them) and otherwise
// defers to events.DecodeAll, which decides and explains. So the fast path never accepts what
// events.DecodeAll rejects or decodes anything differently (FuzzFastDecode checks both).
type decoder struct {
	names map[string]string // interned label values: locations, nodes, models...
}

func newDecoder() *decoder { return &decoder{names: map[string]string{}} }

// batchPrefix is how a batch envelope written by internal/events begins.
var batchPrefix = []byte(`{"type":"` + events.TypeBatch + `"`)

// decodeAll decodes one payload of the type its subject says: one event, or a batch's events.
func (d *decoder) decodeAll(t events.Type, data []byte) ([]events.Event, error) {
	if t == events.TypeGPUSample || t == events.TypeTokensSample {
		if bytes.HasPrefix(data, batchPrefix) {
			if evs, ok := d.batch(t, data); ok {
				return evs, nil
			}
		} else if e, ok := d.whole(t, data); ok {
			return []events.Event{e}, nil
		}
	}
	return events.DecodeAll(data)
}

// whole parses data as exactly one event of type t.
func (d *decoder) whole(t events.Type, data []byte) (events.Event, bool) {
	s := events.NewScanner(data)
	e, ok := d.event(t, &s)
	return e, ok && s.End()
}

// event parses and validates one GPU or token sample at s.
func (d *decoder) event(t events.Type, s *events.Scanner) (events.Event, bool) {
	var e events.Event
	var ok bool
	switch t {
	case events.TypeGPUSample:
		g := &events.GPUSample{}
		e, ok = g, d.gpu(s, g)
	case events.TypeTokensSample:
		k := &events.TokensSample{}
		e, ok = k, d.tokens(s, k)
	}
	return e, ok && events.Validate(e) == nil
}

// batch parses a batch envelope of events of type t and checks it as events.DecodeAll does.
func (d *decoder) batch(t events.Type, data []byte) ([]events.Event, bool) {
	s := events.NewScanner(data)
	var id []byte
	var evs []events.Event
	seen, ok := members(&s, func(key []byte) (uint, bool) {
		switch string(key) {
		case "type":
			b, ok := s.Str()
			return 0, ok && string(b) == string(events.TypeBatch)
		case "version":
			b, ok := s.Str()
			return 1, ok && major1(b)
		case "id":
			b, ok := s.Str()
			id = b
			return 2, ok
		case "event_type":
			b, ok := s.Str()
			return 3, ok && string(b) == string(t)
		case "events":
			var ok bool
			evs, ok = d.elements(t, &s)
			return 4, ok
		}
		return 0, false
	})
	if !ok || seen != 1<<5-1 || !s.End() || events.CheckBatch(string(id), t, evs) != nil {
		return nil, false
	}
	return evs, true
}

// elements parses a batch's non-empty array of events.
func (d *decoder) elements(t events.Type, s *events.Scanner) ([]events.Event, bool) {
	if !s.Byte('[') {
		return nil, false
	}
	var evs []events.Event
	for {
		e, ok := d.event(t, s)
		if !ok {
			return nil, false
		}
		evs = append(evs, e)
		if s.Byte(']') {
			return evs, true
		}
		if !s.Byte(',') {
			return nil, false
		}
	}
}

// intern returns a string equal to b, shared with earlier equal values.
func (d *decoder) intern(b []byte) string {
	if s, ok := d.names[string(b)]; ok {
		return s
	}
	if len(d.names) > 1<<14 {
		clear(d.names)
	}
	s := string(b)
	d.names[s] = s
	return s
}

// gpu and tokens parse one field of their type: they return the field's bit, or ok=false for
// an unknown key or a bad value.
func (d *decoder) gpu(s *events.Scanner, e *events.GPUSample) bool {
	var index int64
	ok := d.object(s, e.EventType(), &e.Meta, 10, 0, func(key []byte, s *events.Scanner) (uint, bool) {
		switch string(key) {
		case "location":
			return 0, d.label(s, &e.Location)
		case "node":
			return 1, d.label(s, &e.Node)
		case "uuid":
			return 2, d.label(s, &e.UUID)
		case "index":
			return 3, s.Int64(&index)
		case "model":
			return 4, d.label(s, &e.Model)
		case "utilization_pct":
			return 5, s.Float64(&e.UtilizationPct)
		case "memory_used_bytes":
			return 6, s.Int64(&e.MemoryUsedBytes)
		case "memory_total_bytes":
			return 7, s.Int64(&e.MemoryTotalBytes)
		case "power_w":
			return 8, s.Float64(&e.PowerW)
		case "temperature_c":
			return 9, s.Float64(&e.TemperatureC)
		}
		return 0, false
	})
	e.Index = int(index)
	return ok
}

func (d *decoder) tokens(s *events.Scanner, e *events.TokensSample) bool {
	const resetBit = 7
	return d.object(s, e.EventType(), &e.Meta, 8, 1<<resetBit, func(key []byte, s *events.Scanner) (uint, bool) {
		switch string(key) {
		case "location":
			return 0, d.label(s, &e.Location)
		case "workload":
			return 1, d.label(s, &e.Workload)
		case "replica":
			return 2, d.label(s, &e.Replica)
		case "server":
			return 3, d.label(s, &e.Server)
		case "prompt_tokens":
			return 4, s.Int64(&e.PromptTokens)
		case "generation_tokens":
			return 5, s.Int64(&e.GenerationTokens)
		case "requests":
			return 6, s.Int64(&e.Requests)
		case "reset":
			return resetBit, s.Bool(&e.Reset)
		}
		return 0, false
	})
}

func (d *decoder) label(s *events.Scanner, dst *string) bool {
	b, ok := s.Str()
	*dst = d.intern(b)
	return ok
}

// object parses one JSON object at s: the envelope and n fields, each exactly once except the
// optional ones (a bit mask).
func (d *decoder) object(s *events.Scanner, t events.Type, m *events.Meta, n uint, optional uint64,
	field func(key []byte, s *events.Scanner) (uint, bool)) bool {
	seen, ok := members(s, func(key []byte) (uint, bool) {
		bit, known, ok := d.envelope(key, s, t, m)
		if !known {
			bit, ok = field(key, s)
			bit += 4
		}
		return bit, ok
	})
	all := uint64(1)<<(n+4) - 1
	return ok && seen|optional<<4 == all
}

// members parses the members of one JSON object at s; value reads the value of each key and
// returns its bit. It fails on a bad value, an unknown key or a repeated one (events.DecodeAll
// then decides), and returns the bits seen.
func members(s *events.Scanner, value func(key []byte) (uint, bool)) (seen uint64, ok bool) {
	if !s.Byte('{') {
		return 0, false
	}
	for first := true; ; first = false {
		if s.Byte('}') {
			return seen, true
		}
		if !first && !s.Byte(',') {
			return 0, false
		}
		key, ok := s.Key()
		if !ok {
			return 0, false
		}
		bit, ok := value(key)
		if !ok || seen&(1<<bit) != 0 {
			return 0, false
		}
		seen |= 1 << bit
	}
}

// envelope parses the value of an envelope key (bits 0-3); known is false for other keys.
func (d *decoder) envelope(key []byte, s *events.Scanner, t events.Type, m *events.Meta) (bit uint, known, ok bool) {
	switch string(key) {
	case "type":
		b, ok := s.Str()
		m.Type = t
		return 0, true, ok && string(b) == string(t)
	case "version":
		b, ok := s.Str()
		m.Version = d.intern(b)
		return 1, true, ok && major1(b)
	case "id":
		b, ok := s.Str()
		m.ID = string(b)
		return 2, true, ok
	case "at":
		return 3, true, s.Time(&m.At)
	}
	return 0, false, false
}

// major1 says whether a version is one events.Decode reads: major 1.
func major1(v []byte) bool {
	return len(v) >= 1 && v[0] == '1' && (len(v) == 1 || v[1] == '.')
}
