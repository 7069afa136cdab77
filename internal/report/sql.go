package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// lit quotes s as a ClickHouse string literal.
func lit(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// ms64 is a DateTime64(3) literal for t, compared against the tables' times.
func ms64(t time.Time) string {
	return "fromUnixTimestamp64Milli(toInt64(" + strconv.FormatInt(t.UnixMilli(), 10) + "), 'UTC')"
}

// hourLit is a DateTime literal for t, compared against the rollups' hours.
func hourLit(t time.Time) string {
	return "toDateTime(" + strconv.FormatInt(t.Unix(), 10) + ", 'UTC')"
}

// where renders a filter as SQL conditions over the columns that hold each dimension in one table
// (dimensions the table has no column for are left to the caller). It always returns at least
// one condition, so it can follow WHERE.
func where(f Filter, cols map[Dim]string) string {
	conds := []string{"1"}
	for _, d := range Dims {
		vals, col := f[d], cols[d]
		if len(vals) == 0 || col == "" {
			continue
		}
		q := make([]string, len(vals))
		for i, v := range vals {
			q[i] = lit(v)
		}
		conds = append(conds, col+" IN ("+strings.Join(q, ", ")+")")
	}
	return strings.Join(conds, " AND ")
}

// queryRows runs a query and decodes each JSONEachRow line into a T.
func queryRows[T any](ctx context.Context, q Querier, query string) ([]T, error) {
	out, err := q.Query(ctx, query)
	if err != nil {
		return nil, err
	}
	var rows []T
	for line := range bytes.SplitSeq(bytes.TrimSpace(out), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(line, &v); err != nil {
			return nil, fmt.Errorf("decoding a result row %.200q: %w", line, err)
		}
		rows = append(rows, v)
	}
	return rows, nil
}

// keep reports whether a value passes the filter on dimension d.
func (f Filter) keep(d Dim, v string) bool {
	vals := f[d]
	if len(vals) == 0 {
		return true
	}
	for _, x := range vals {
		if x == v {
			return true
		}
	}
	return false
}
