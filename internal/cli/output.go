package cli

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// DefaultNATS is the URL collector and report dial when given none: the embedded server.
const DefaultNATS = "nats://127.0.0.1:4222"

// Row is one record of a command's output, by column name.
type Row map[string]any

// Write prints rows as a table, JSON (an array of objects) or CSV, columns in the given order.
func Write(w io.Writer, format string, columns []string, rows []Row) error {
	switch format {
	case "table", "":
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for i, c := range columns {
			fmt.Fprint(tw, upper(c), sep(i, len(columns)))
		}
		for _, r := range rows {
			for i, c := range columns {
				fmt.Fprint(tw, cell(r[c]), sep(i, len(columns)))
			}
		}
		return tw.Flush()
	case "json":
		if rows == nil {
			rows = []Row{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	case "csv":
		cw := csv.NewWriter(w)
		_ = cw.Write(columns)
		for _, r := range rows {
			rec := make([]string, len(columns))
			for i, c := range columns {
				rec[i] = cell(r[c])
			}
			_ = cw.Write(rec)
		}
		cw.Flush()
		return cw.Error()
	}
	return fmt.Errorf("--output %q: want table, json or csv", format)
}

func sep(i, n int) string {
	if i == n-1 {
		return "\n"
	}
	return "\t"
}

func cell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case float64:
		return fmt.Sprintf("%.4g", x)
	default:
		return fmt.Sprint(x)
	}
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}
