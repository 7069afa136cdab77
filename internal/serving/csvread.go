package serving

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// ErrMalformedInput marks an input file that does not have the shape docs/serving.md gives it.
var ErrMalformedInput = errors.New("malformed input")

// table is a CSV file read whole, with its header's columns by name; errors name file:line.
type table struct {
	name string
	cols map[string]int
	rows [][]string
	line []int // line[i] is rows[i]'s line in the file
}

// maxRows bounds what one input file may hold, so a hostile file cannot exhaust memory.
const maxRows = 1 << 20

// readTable reads a CSV with a header holding at least the columns want.
func readTable(name string, r io.Reader, want ...string) (*table, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = false
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s:1: %w: cannot read the header: %v", name, ErrMalformedInput, err)
	}
	tb := &table{name: name, cols: map[string]int{}}
	for i, h := range header {
		tb.cols[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	for _, c := range want {
		if _, ok := tb.cols[c]; !ok {
			return nil, fmt.Errorf("%s:1: %w: the header lacks column %q (want %s)", name, ErrMalformedInput, c, strings.Join(want, ","))
		}
	}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return tb, nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("%s:%d: %w: %v", name, pe.Line, ErrMalformedInput, pe.Err)
			}
			return nil, fmt.Errorf("%s: %w: %v", name, ErrMalformedInput, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(header) {
			return nil, fmt.Errorf("%s:%d: %w: %d fields, the header has %d", name, line, ErrMalformedInput, len(rec), len(header))
		}
		if len(tb.rows) >= maxRows {
			return nil, fmt.Errorf("%s:%d: %w: more than %d rows", name, line, ErrMalformedInput, maxRows)
		}
		tb.rows = append(tb.rows, rec)
		tb.line = append(tb.line, line)
	}
}

// str is row i's value in column c, trimmed.
func (tb *table) str(i int, c string) string { return strings.TrimSpace(tb.rows[i][tb.cols[c]]) }

// num reads row i's column c as a finite number >= 0.
func (tb *table) num(i int, c string) (float64, error) {
	s := tb.str(i, c)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, tb.errf(i, "%s = %q is not a finite number >= 0", c, s)
	}
	return v, nil
}

// whole reads row i's column c as a whole number >= 0.
func (tb *table) whole(i int, c string) (int, error) {
	s := tb.str(i, c)
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 || v > math.MaxInt32 {
		return 0, tb.errf(i, "%s = %q is not a whole number >= 0", c, s)
	}
	return v, nil
}

// errf is an error at row i's line.
func (tb *table) errf(i int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %w: %s", tb.name, tb.line[i], ErrMalformedInput, fmt.Sprintf(format, args...))
}

// has reports whether the table has column c.
func (tb *table) has(c string) bool {
	_, ok := tb.cols[c]
	return ok
}
