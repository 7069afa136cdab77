package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// usageRow is one row of the cost rollup summed to a step, as rollupUsage queries it.
type usageRow struct {
	keyRow
	Step         int64   `json:"step"`
	USD          float64 `json:"usd"`
	GPUHours     float64 `json:"gpu_hours"`
	ReplicaHours float64 `json:"replica_hours"`
}

// decodeUsageRows decodes the JSONEachRow lines of usageRow. A report by series reads a row per
// series and day (300,000 over 30 days of 10,000 series), and encoding/json's reflection was most
// of the time a page took, so the lines the engine writes (flat objects of these fields, plain
// ASCII strings, JSON numbers) are scanned here, their strings kept once; any other line is
// left to encoding/json, which gives the same row or the error.
func decodeUsageRows(out []byte) ([]usageRow, error) {
	var rows []usageRow
	names := map[string]string{}
	for line := range bytes.SplitSeq(bytes.TrimSpace(out), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r usageRow
		if !scanUsageRow(line, &r, names) {
			r = usageRow{}
			if err := json.Unmarshal(line, &r); err != nil {
				return nil, fmt.Errorf("decoding a result row %.200q: %w", line, err)
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// scanUsageRow reads a line that is a flat JSON object of usageRow's fields, each named exactly
// as its tag, into r, and reports whether it could; strings are looked up in names, so a
// workload's name is one string however many rows carry it.
func scanUsageRow(line []byte, r *usageRow, names map[string]string) bool {
	s := scanner{b: line}
	if !s.skip('{') {
		return false
	}
	if s.skip('}') {
		return s.end()
	}
	for {
		key, ok := s.str()
		if !ok || !s.skip(':') {
			return false
		}
		if !s.field(key, r, names) {
			return false
		}
		if s.skip('}') {
			return s.end()
		}
		if !s.skip(',') {
			return false
		}
	}
}

// field reads the value of the field named key into r.
func (s *scanner) field(key []byte, r *usageRow, names map[string]string) bool {
	var dst *string
	switch string(key) {
	case "workload":
		dst = &r.Workload
	case "location":
		dst = &r.Location
	case "provider":
		dst = &r.Provider
	case "market":
		dst = &r.Market
	case "gpu":
		dst = &r.GPU
	case "step":
		n, err := strconv.ParseInt(string(s.number()), 10, 64)
		r.Step = n
		return err == nil
	case "usd":
		return s.float(&r.USD)
	case "gpu_hours":
		return s.float(&r.GPUHours)
	case "replica_hours":
		return s.float(&r.ReplicaHours)
	default:
		return false // encoding/json matches names without regard to case
	}
	v, ok := s.str()
	if !ok {
		return false
	}
	name, ok := names[string(v)]
	if !ok {
		name = string(v)
		names[name] = name
	}
	*dst = name
	return true
}

// scanner reads a line of JSON left to right.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\r' || s.b[s.i] == '\n') {
		s.i++
	}
}

// skip reads c after any space.
func (s *scanner) skip(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// end reports whether only space is left.
func (s *scanner) end() bool {
	s.space()
	return s.i == len(s.b)
}

// str reads a string of printable ASCII without escapes (anything else is left to encoding/json).
func (s *scanner) str() ([]byte, bool) {
	if !s.skip('"') {
		return nil, false
	}
	start := s.i
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, false
		}
	}
	return nil, false
}

// number reads a JSON number, or nothing where there is none.
func (s *scanner) number() []byte {
	s.space()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.digits() == 0:
		return nil
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return nil
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return nil
		}
	}
	return s.b[start:s.i]
}

func (s *scanner) digits() int {
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// float reads a JSON number into f.
func (s *scanner) float(f *float64) bool {
	v, err := strconv.ParseFloat(string(s.number()), 64)
	*f = v
	return err == nil
}
