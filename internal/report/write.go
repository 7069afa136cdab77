package report

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bursar-dev/bursar/internal/billing"
	"github.com/bursar-dev/bursar/internal/cli"
)

// Formats are the output formats every report prints in.
var Formats = []string{"table", "json", "yaml", "csv", "markdown"}

// Write prints a result as a table, JSON, YAML, CSV or markdown, or as Parquet (report focus). chart, when not empty, is the path of
// the result's chart PNG, which markdown embeds.
func Write(w io.Writer, format string, res *Result, chart string) error {
	switch format {
	case "json", "yaml":
		return cli.Write(w, format, res.Columns, res.Rows)
	case "csv":
		return cli.Write(w, "csv", res.Columns, text(res.Rows))
	case "table", "":
		rows := text(res.Rows)
		if res.Total != nil {
			rows = append(rows, text([]cli.Row{res.Total})...)
		}
		if err := cli.Write(w, "table", res.Columns, rows); err != nil {
			return err
		}
		for _, n := range res.Notes {
			fmt.Fprintln(w, "note:", n)
		}
		return nil
	case "markdown", "md":
		return writeMarkdown(w, res, chart)
	case "parquet":
		rows := make([]map[string]any, len(res.Rows))
		for i, r := range res.Rows {
			rows[i] = r
		}
		return billing.WriteParquet(w, res.Columns, rows)
	}
	return fmt.Errorf("--output %q: want %s", format, cli.Or(Formats))
}

func writeMarkdown(w io.Writer, res *Result, chart string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", res.Title)
	if chart != "" {
		fmt.Fprintf(&b, "![%s](%s)\n\n", res.Title, filepath.ToSlash(chart))
	}
	b.WriteString("|")
	for _, c := range res.Columns {
		b.WriteString(" " + c + " |")
	}
	b.WriteString("\n|")
	for range res.Columns {
		b.WriteString(" --- |")
	}
	b.WriteString("\n")
	rows := text(res.Rows)
	if res.Total != nil {
		rows = append(rows, text([]cli.Row{res.Total})...)
	}
	for _, r := range rows {
		b.WriteString("|")
		for _, c := range res.Columns {
			v, _ := r[c].(string)
			b.WriteString(" " + strings.ReplaceAll(v, "|", `\|`) + " |")
		}
		b.WriteString("\n")
	}
	for _, n := range res.Notes {
		b.WriteString("\n> " + n + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// text formats every cell as a string: numbers in full (they are rounded already), so money
// keeps its cents in tables and CSV.
func text(rows []cli.Row) []cli.Row {
	out := make([]cli.Row, len(rows))
	for i, r := range rows {
		t := make(cli.Row, len(r))
		for k, v := range r {
			t[k] = cellText(v)
		}
		out[i] = t
	}
	return out
}

func cellText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	default:
		return fmt.Sprint(x)
	}
}
