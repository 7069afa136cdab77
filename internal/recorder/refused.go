package recorder

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/bursar-dev/bursar/internal/store"
)

// refusal is a row of a batch's table that the store refused, and why.
type refusal struct {
	table string
	msg   int    // the message that wrote it: its index in batch.msgs
	id    string // the event's id, the row's first column
	many  bool   // the message wrote other rows to the table
	err   error
}

// insertTable inserts a batch's rows of one table. When the store refuses them (a value it cannot
// read or hold: store.Refused), retrying would hold the stream for ever behind one message, so
// the rows are split until the refused ones are found: the others are stored, and the refused
// ones returned, for their messages to go to DLQ with the store's reason.
func (l *loop) insertTable(ctx context.Context, tbl *table, r *row, token string) ([]refusal, error) {
	err := l.insert(ctx, tbl, token, r.b)
	if err == nil || !store.Refused(err) {
		return nil, err
	}
	l.r.metrics.split.WithLabelValues(l.stream).Inc()
	l.log.Warn("ClickHouse refused a batch's rows; splitting it to set the refused ones aside",
		"table", tbl.name, "token", token, "err", oneLine(err))
	ends := rowEnds(r.b)
	var rows []rowErr
	if err := l.isolate(ctx, tbl, r.b, ends, token, 0, len(ends), err, &rows); err != nil {
		return nil, err
	}
	return r.refusals(tbl.name, rows, ends), nil
}

// rowErr is a row's index in its table's rows and why the store refused it.
type rowErr struct {
	i   int
	err error
}

// isolate inserts rows [lo, hi) of data, which the store refused with cause, as two halves, and
// each half it refuses the same way, down to single rows: those are the refused ones, added to
// out. k refused rows of n cost about 2k·log2(n) inserts. Each part carries a token derived from
// the batch's and its rows, so after a crash the batch, cut the same way, is split the same way
// and the parts stored before are dropped as repeats.
func (l *loop) isolate(ctx context.Context, tbl *table, data []byte, ends []int, token string, lo, hi int,
	cause error, out *[]rowErr) error {
	if hi-lo == 1 {
		*out = append(*out, rowErr{lo, cause})
		return nil
	}
	mid := lo + (hi-lo)/2
	for _, part := range [2][2]int{{lo, mid}, {mid, hi}} {
		a, z := part[0], part[1]
		err := l.insert(ctx, tbl, fmt.Sprintf("%s:rows:%d-%d", token, a, z), data[rowStart(ends, a):ends[z-1]])
		if err == nil {
			continue
		}
		if !store.Refused(err) {
			return err // ctx ended
		}
		if err := l.isolate(ctx, tbl, data, ends, token, a, z, err, out); err != nil {
			return err
		}
	}
	return nil
}

// rowEnds returns the offset just past each row of data: rows end with a newline, which never
// occurs inside one (see row).
func rowEnds(data []byte) []int {
	ends := make([]int, 0, bytes.Count(data, []byte{'\n'}))
	for i, c := range data {
		if c == '\n' {
			ends = append(ends, i+1)
		}
	}
	return ends
}

func rowStart(ends []int, i int) int {
	if i == 0 {
		return 0
	}
	return ends[i-1]
}

// refusals names the messages that wrote the refused rows (in ascending order).
func (r *row) refusals(table string, rows []rowErr, ends []int) []refusal {
	out := make([]refusal, 0, len(rows))
	first, s := 0, 0 // the first row of span s
	for _, re := range rows {
		i := re.i
		for i >= first+r.spans[s].rows {
			first += r.spans[s].rows
			s++
		}
		line := r.b[rowStart(ends, i):ends[i]]
		id, _, _ := bytes.Cut(line, []byte{'\t'})
		out = append(out, refusal{table: table, msg: r.spans[s].msg, id: string(id), many: r.spans[s].rows > 1, err: re.err})
	}
	return out
}

// setAside sends each message with refused rows to DLQ, once, with the store's reasons; its
// other rows are stored, and the batch's ack covers it.
func (l *loop) setAside(ctx context.Context, b *batch, refused []refusal) error {
	reasons := map[int][]string{}
	var order []int
	for _, f := range refused {
		if reasons[f.msg] == nil {
			order = append(order, f.msg)
		}
		what := f.table + ": "
		if f.many {
			what += "event " + f.id + ": "
		}
		reasons[f.msg] = append(reasons[f.msg], what+oneLine(f.err))
	}
	for _, i := range order {
		if err := l.deadLetter(ctx, b.msgs[i], "store refused: "+strings.Join(reasons[i], "; ")); err != nil {
			return err
		}
		l.r.metrics.refused.WithLabelValues(l.stream).Inc()
	}
	return nil
}

// maxReason bounds the store's part of a DLQ reason: ClickHouse's own message may quote the row.
const maxReason = 1000

// oneLine is err's text on one line (a DLQ reason is a header), cut to maxReason bytes.
func oneLine(err error) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	if len(s) > maxReason {
		s = strings.ToValidUTF8(s[:maxReason], "") + "…"
	}
	return s
}
