package recorder

import (
	"fmt"
	"strconv"
	"time"
)

// row appends one TabSeparated row. Strings are escaped so a row never spans lines and a batch
// never holds an empty line (libchdb ends an INSERT's inline data at the first empty line).
// A batch's row of a table holds all its rows; spans says which message wrote which of them.
type row struct {
	b     []byte
	spans []span
}

// span is a run of rows that one message of the batch wrote: its index in batch.msgs and how
// many rows, following the previous span's.
type span struct{ msg, rows int }

func (r *row) sep() { r.b = append(r.b, '\t') }

func (r *row) end() { r.b = append(r.b, '\n') }

func (r *row) str(s string) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			r.b = append(r.b, '\\', '\\')
		case '\t':
			r.b = append(r.b, '\\', 't')
		case '\n':
			r.b = append(r.b, '\\', 'n')
		case '\r':
			r.b = append(r.b, '\\', 'r')
		case 0:
			r.b = append(r.b, '\\', '0')
		default:
			r.b = append(r.b, c)
		}
	}
}

// quoted appends s as a quoted string inside an array or tuple.
func (r *row) quoted(s string) {
	r.b = append(r.b, '\'')
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			r.b = append(r.b, '\\', '\'')
			continue
		}
		r.str(s[i : i+1])
	}
	r.b = append(r.b, '\'')
}

// strings appends a list of strings as an Array(String).
func (r *row) strings(ss []string) {
	r.b = append(r.b, '[')
	for i, s := range ss {
		if i > 0 {
			r.b = append(r.b, ',')
		}
		r.quoted(s)
	}
	r.b = append(r.b, ']')
}

func (r *row) int(v int64) { r.b = strconv.AppendInt(r.b, v, 10) }

func (r *row) float(v float64) { r.b = strconv.AppendFloat(r.b, v, 'g', -1, 64) }

func (r *row) bool(v bool) {
	if v {
		r.b = append(r.b, "true"...)
	} else {
		r.b = append(r.b, "false"...)
	}
}

// The range of DateTime64(3): a time outside it cannot be stored.
var (
	minTime = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTime = time.Date(2299, 12, 31, 23, 59, 59, 0, time.UTC)
)

// errTimeRange marks an event whose time DateTime64 cannot hold: it goes to DLQ.
type errTimeRange struct {
	field string
	t     time.Time
}

func (e errTimeRange) Error() string {
	return fmt.Sprintf("field %q: time %s is outside 1900-2299, which ClickHouse cannot store",
		e.field, e.t.Format(time.RFC3339))
}

// time appends t truncated to the millisecond: seconds.millis since the epoch, which ClickHouse
// parses fastest, or text before 1970.
func (r *row) time(field string, t time.Time) error {
	if t.Before(minTime) || t.After(maxTime) {
		return errTimeRange{field, t}
	}
	ms := t.UnixMilli()
	if ms < 0 {
		r.b = t.UTC().AppendFormat(r.b, "2006-01-02 15:04:05.000")
		return nil
	}
	r.b = strconv.AppendInt(r.b, ms/1000, 10)
	r.b = append(r.b, '.', byte('0'+ms%1000/100), byte('0'+ms%100/10), byte('0'+ms%10))
	return nil
}

// optTime appends an optional time: NULL when there is none.
func (r *row) optTime(field string, t *time.Time) error {
	if t == nil {
		r.b = append(r.b, '\\', 'N')
		return nil
	}
	return r.time(field, *t)
}
