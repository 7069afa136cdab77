package events

import (
	"encoding/json"
	"math/bits"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"
)

// scanner reads the JSON that Encode writes, from b at i: keys without escapes, numbers as the
// grammar has them, no nulls. Each read reports false for anything else, and decodePlain then
// gives the document to the general path.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// byte reads c after any whitespace.
func (s *scanner) byte(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// end reports whether only whitespace is left.
func (s *scanner) end() bool {
	s.ws()
	return s.i == len(s.b)
}

// literal reads a string literal, quotes included, and says whether it is plain: no escape, no
// control character, valid UTF-8, so that its bytes between the quotes are the string.
func (s *scanner) literal() (lit []byte, plain, ok bool) {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false, false
	}
	start, plain, ascii := s.i, true, true
	for j := start + 1; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			lit = s.b[start:s.i]
			return lit, plain && (ascii || utf8.Valid(lit)), true
		case c == '\\':
			plain = false
			j++ // the escaped byte cannot end the literal
		case c < 0x20:
			plain = false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false, false
}

// str reads a plain string (see literal), as the bytes between its quotes.
func (s *scanner) str() ([]byte, bool) {
	lit, plain, ok := s.literal()
	if !ok || !plain {
		return nil, false
	}
	return lit[1 : len(lit)-1], true
}

// text reads a string value. A plain one is copied; one with escapes or other bytes to mend is
// given to encoding/json alone, so it reads exactly as the general path reads it.
func (s *scanner) text(p *string) bool {
	lit, plain, ok := s.literal()
	switch {
	case !ok:
		return false
	case plain:
		*p = string(lit[1 : len(lit)-1])
		return true
	}
	return json.Unmarshal(lit, p) == nil
}

// key reads a member's name and the colon after it.
func (s *scanner) key() ([]byte, bool) {
	k, ok := s.str()
	return k, ok && s.byte(':')
}

func (s *scanner) digits() int {
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// number reads a JSON number literal, as a string sharing b's memory (for strconv only).
func (s *scanner) number() (string, bool) {
	s.ws()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	if s.i < len(s.b) && s.b[s.i] == '0' {
		s.i++
	} else if s.digits() == 0 {
		return "", false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return "", false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return "", false
		}
	}
	lit := s.b[start:s.i]
	return unsafe.String(unsafe.SliceData(lit), len(lit)), true
}

// value reads one value into the field p points to, as encoding/json would decode it.
func (s *scanner) value(p any) bool {
	switch p := p.(type) {
	case *string:
		return s.text(p)
	case *int:
		lit, ok := s.number()
		n, err := strconv.ParseInt(lit, 10, strconv.IntSize)
		*p = int(n)
		return ok && err == nil
	case *int64:
		return s.int64(p)
	case *float64:
		return s.float64(p)
	case *bool:
		return s.bool(p)
	case *time.Time:
		return s.time(p)
	case **time.Time: // an optional time; a null is left to the general path
		t := new(time.Time)
		*p = t
		return s.time(t)
	case *[]PlanAction:
		return s.actions(p)
	case *[]string:
		return s.strings(p)
	}
	return false
}

// strings reads an array of strings (no nulls: a null is left to the general path). An empty
// array reads as an empty, non-nil list, as with encoding/json.
func (s *scanner) strings(p *[]string) bool {
	if !s.byte('[') {
		return false
	}
	out := []string{}
	if s.byte(']') {
		*p = out
		return true
	}
	for {
		var v string
		if !s.text(&v) {
			return false
		}
		out = append(out, v)
		if s.byte(']') {
			*p = out
			return true
		}
		if !s.byte(',') {
			return false
		}
	}
}

func (s *scanner) int64(p *int64) bool {
	lit, ok := s.number()
	n, err := strconv.ParseInt(lit, 10, 64)
	*p = n
	return ok && err == nil
}

func (s *scanner) float64(p *float64) bool {
	lit, ok := s.number()
	f, err := strconv.ParseFloat(lit, 64)
	*p = f
	return ok && err == nil
}

func (s *scanner) bool(p *bool) bool {
	s.ws()
	switch rest := s.b[s.i:]; {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		*p, s.i = true, s.i+4
	case len(rest) >= 5 && string(rest[:5]) == "false":
		*p, s.i = false, s.i+5
	default:
		return false
	}
	return true
}

// time reads an RFC 3339 string with time.Time's own UnmarshalJSON, as encoding/json does.
func (s *scanner) time(p *time.Time) bool {
	s.ws()
	lit, _, ok := s.literal()
	return ok && p.UnmarshalJSON(lit) == nil
}

// actions reads a plan's actions: an array of objects, each with any of an action's members once.
// Members left out stay zero, as with encoding/json; Validate then judges the action.
func (s *scanner) actions(p *[]PlanAction) bool {
	if !s.byte('[') {
		return false
	}
	out := []PlanAction{}
	if s.byte(']') {
		*p = out
		return true
	}
	for {
		out = append(out, PlanAction{})
		var buf [maxMembers]member
		if _, ok := s.object((&out[len(out)-1]).members(buf[:0])); !ok {
			return false
		}
		if s.byte(']') {
			*p = out
			return true
		}
		if !s.byte(',') {
			return false
		}
	}
}

// object reads a whole object whose keys are among ms, each at most once, and returns the bit
// set of the members it read.
func (s *scanner) object(ms []member) (uint64, bool) {
	if !s.byte('{') {
		return 0, false
	}
	return s.rest(ms, 0, true)
}

// rest reads an object's members up to its closing brace; seen holds the bits of those already
// read, and first says whether none was. A key not among ms, or a repeated one, stops it.
func (s *scanner) rest(ms []member, seen uint64, first bool) (uint64, bool) {
	last := bits.Len64(seen) - 1 // the member read last, if they came in order
	for ; ; first = false {
		if s.byte('}') {
			return seen, true
		}
		if !first && !s.byte(',') {
			return seen, false
		}
		key, ok := s.key()
		if !ok {
			return seen, false
		}
		i := find(ms, key, last+1)
		if i < 0 || seen&(1<<i) != 0 || !s.value(ms[i].val) {
			return seen, false
		}
		seen |= 1 << i
		last = i
	}
}

// find returns the index of the member named key, trying next first: Encode writes members in
// order, so the next key is nearly always the next member.
func find(ms []member, key []byte, next int) int {
	if next < len(ms) && ms[next].name == string(key) {
		return next
	}
	for i := range ms {
		if ms[i].name == string(key) {
			return i
		}
	}
	return -1
}

// Scanner reads the plain JSON that Encode writes, for a decoder outside this package that knows
// its documents' shape without reflection (the recorder's fast path for samples). Each read
// skips the whitespace before it and reports false for anything else: keys and strings with
// escapes, control characters or invalid UTF-8, numbers outside the grammar or their type, nulls.
// Such a document is left to DecodeAll, which decides and explains.
type Scanner struct{ s scanner }

// NewScanner returns a Scanner at the start of b.
func NewScanner(b []byte) Scanner { return Scanner{scanner{b: b}} }

// Byte reads c.
func (s *Scanner) Byte(c byte) bool { return s.s.byte(c) }

// End reports whether only whitespace is left.
func (s *Scanner) End() bool { return s.s.end() }

// Str reads a plain string (no escape, no control character, valid UTF-8), as the bytes between
// its quotes, which share the document's memory.
func (s *Scanner) Str() ([]byte, bool) { return s.s.str() }

// Key reads a member's name, a plain string, and the colon after it.
func (s *Scanner) Key() ([]byte, bool) { return s.s.key() }

// Int64, Float64, Bool and Time read a value into p as encoding/json would decode it.
func (s *Scanner) Int64(p *int64) bool { return s.s.int64(p) }

func (s *Scanner) Float64(p *float64) bool { return s.s.float64(p) }

func (s *Scanner) Bool(p *bool) bool { return s.s.bool(p) }

func (s *Scanner) Time(p *time.Time) bool { return s.s.time(p) }
