package cli

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"go.yaml.in/yaml/v3"
)

// DefaultNATS is the URL collector and report dial when given none: the embedded server.
const DefaultNATS = "nats://127.0.0.1:4222"

// Row is one record of a command's output, by column name.
type Row map[string]any

// Formats are the output formats Write prints: every command that prints rows offers them.
var Formats = []string{"table", "json", "yaml", "csv"}

// Write prints rows as a table, JSON or YAML (a list of objects) or CSV, columns in the given
// order.
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
	case "yaml":
		return writeYAML(w, columns, rows)
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
	return fmt.Errorf("--output %q: want table, json, yaml or csv", format)
}

// writeYAML prints rows as a YAML list of mappings whose keys keep the columns' order, which a
// map would lose.
func writeYAML(w io.Writer, columns []string, rows []Row) error {
	list := &yaml.Node{Kind: yaml.SequenceNode}
	for _, r := range rows {
		m := &yaml.Node{Kind: yaml.MappingNode}
		for _, c := range columns {
			var v yaml.Node
			if err := v.Encode(r[c]); err != nil {
				return fmt.Errorf("encoding column %s as yaml: %w", c, err)
			}
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: c}, &v)
		}
		list.Content = append(list.Content, m)
	}
	if len(rows) == 0 {
		list.Style = yaml.FlowStyle // "[]", not an empty document
	}
	return EncodeYAML(w, list)
}

// EncodeYAML writes v as one YAML document indented by two spaces, the style of Bursar's files.
func EncodeYAML(w io.Writer, v any) error {
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encoding yaml: %w", err)
	}
	return enc.Close()
}

// JSONToYAML re-encodes a JSON document as YAML, for a command whose output is built as JSON.
func JSONToYAML(w io.Writer, data []byte) error {
	var n yaml.Node
	if err := yaml.Unmarshal(data, &n); err != nil { // JSON is YAML
		return fmt.Errorf("reading json output: %w", err)
	}
	clearStyle(&n)
	return EncodeYAML(w, &n)
}

// clearStyle drops JSON's flow style and quotes so the YAML reads as block YAML.
// The encoder quotes again any string that would otherwise read as another type.
func clearStyle(n *yaml.Node) {
	n.Style = 0
	for _, c := range n.Content {
		clearStyle(c)
	}
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
