package events

import (
	"encoding/json"
	"math"
	"strconv"
	"time"
)

// appendEvent writes e's JSON after b, byte for byte what json.Marshal writes for it, without
// reflection. It reports false for what only json.Marshal can say (a value it cannot encode, such
// as a NaN or a year past 9999), so that Encode returns json.Marshal's own error.
func appendEvent(b []byte, e Event) ([]byte, bool) {
	var buf [maxMembers]member
	ms := membersOf(e, buf[:0])
	if ms == nil {
		return nil, false
	}
	return appendObject(b, ms)
}

func appendObject(b []byte, ms []member) ([]byte, bool) {
	b = append(b, '{')
	first := true
	for _, m := range ms {
		if m.omitEmpty && m.empty() {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, m.name...) // names are plain ASCII: no escapes
		b = append(b, '"', ':')
		var ok bool
		if b, ok = appendValue(b, m.val); !ok {
			return nil, false
		}
	}
	return append(b, '}'), true
}

func appendValue(b []byte, p any) ([]byte, bool) {
	switch p := p.(type) {
	case *string:
		return appendString(b, *p), true
	case *int:
		return strconv.AppendInt(b, int64(*p), 10), true
	case *int64:
		return strconv.AppendInt(b, *p, 10), true
	case *float64:
		return appendFloat(b, *p)
	case *bool:
		return strconv.AppendBool(b, *p), true
	case *time.Time:
		return appendTime(b, *p)
	case **time.Time:
		if *p == nil {
			return append(b, "null"...), true
		}
		return appendTime(b, **p)
	case *[]PlanAction:
		return appendActions(b, *p)
	case *[]string:
		return appendStrings(b, *p), true
	}
	return nil, false
}

// appendStrings writes a list of strings as encoding/json does: null for a nil one.
func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendString writes s quoted. Plain ASCII, the usual case, is copied; anything else (escapes,
// HTML characters, non-ASCII, invalid UTF-8) is left to encoding/json so it stays identical.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendFloat writes f as encoding/json does: the shortest form that reads back as f, in
// exponent form below 1e-6 and from 1e21 on, with a one-digit negative exponent kept short.
func appendFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

// appendTime writes t as time.Time's MarshalJSON does (RFC 3339 with nanoseconds), or reports
// false where MarshalJSON fails.
func appendTime(b []byte, t time.Time) ([]byte, bool) {
	b = append(b, '"')
	b, err := t.AppendText(b)
	if err != nil {
		return nil, false
	}
	return append(b, '"'), true
}

func appendActions(b []byte, as []PlanAction) ([]byte, bool) {
	if as == nil {
		return append(b, "null"...), true
	}
	b = append(b, '[')
	for i := range as {
		if i > 0 {
			b = append(b, ',')
		}
		var buf [maxMembers]member
		var ok bool
		if b, ok = appendObject(b, as[i].members(buf[:0])); !ok {
			return nil, false
		}
	}
	return append(b, ']'), true
}
