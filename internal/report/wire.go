package report

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/bursar-dev/bursar/internal/cli"
)

// wireResult is a Result as the owner sends it back. Cells carry their Go type, because plain
// JSON would turn every int into a float64 and the printed tables would differ from a local run.
type wireResult struct {
	Title   string                `json:"title"`
	Columns []string              `json:"columns"`
	Rows    []map[string]wireCell `json:"rows"`
	Total   map[string]wireCell   `json:"total,omitempty"`
	Notes   []string              `json:"notes,omitempty"`
	Series  *Series               `json:"series,omitempty"`
}

// wireCell is one typed value: T names the type (s, i, i64, u64, f, b, t, actions), V holds it.
type wireCell struct {
	T string          `json:"t"`
	V json.RawMessage `json:"v,omitempty"`
}

// encodeResult is res as the owner sends it.
func encodeResult(res *Result) ([]byte, error) {
	w := wireResult{Title: res.Title, Columns: res.Columns, Notes: res.Notes, Series: res.Series}
	for _, r := range res.Rows {
		c, err := encodeRow(r)
		if err != nil {
			return nil, err
		}
		w.Rows = append(w.Rows, c)
	}
	if res.Total != nil {
		c, err := encodeRow(res.Total)
		if err != nil {
			return nil, err
		}
		w.Total = c
	}
	return json.Marshal(w)
}

func encodeRow(r cli.Row) (map[string]wireCell, error) {
	out := make(map[string]wireCell, len(r))
	for k, v := range r {
		var t string
		switch v.(type) {
		case nil:
			out[k] = wireCell{T: "n"}
			continue
		case string:
			t = "s"
		case int:
			t = "i"
		case int64:
			t = "i64"
		case uint64:
			t = "u64"
		case float64:
			t = "f"
		case bool:
			t = "b"
		case time.Time:
			t = "t"
		case ActionDetails:
			t = "actions"
		default:
			return nil, fmt.Errorf("encoding column %s: no wire type for %T", k, v)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("encoding column %s: %w", k, err)
		}
		out[k] = wireCell{T: t, V: b}
	}
	return out, nil
}

// decodeResult reads what encodeResult wrote.
func decodeResult(data []byte) (*Result, error) {
	var w wireResult
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("decoding the owner's result: %w", err)
	}
	res := &Result{Title: w.Title, Columns: w.Columns, Notes: w.Notes, Series: w.Series}
	for _, c := range w.Rows {
		r, err := decodeRow(c)
		if err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, r)
	}
	if w.Total != nil {
		r, err := decodeRow(w.Total)
		if err != nil {
			return nil, err
		}
		res.Total = r
	}
	return res, nil
}

func decodeRow(c map[string]wireCell) (cli.Row, error) {
	r := make(cli.Row, len(c))
	for k, cell := range c {
		v, err := decodeCell(cell)
		if err != nil {
			return nil, fmt.Errorf("decoding the owner's result, column %s: %w", k, err)
		}
		r[k] = v
	}
	return r, nil
}

func decodeCell(c wireCell) (any, error) {
	switch c.T {
	case "n":
		return nil, nil
	case "s":
		return decodeAs[string](c.V)
	case "i":
		return decodeAs[int](c.V)
	case "i64":
		return decodeAs[int64](c.V)
	case "u64":
		return decodeAs[uint64](c.V)
	case "f":
		return decodeAs[float64](c.V)
	case "b":
		return decodeAs[bool](c.V)
	case "t":
		return decodeAs[time.Time](c.V)
	case "actions":
		return decodeAs[ActionDetails](c.V)
	}
	return nil, fmt.Errorf("unknown cell type %q", c.T)
}

func decodeAs[T any](b json.RawMessage) (any, error) {
	var v T
	err := json.Unmarshal(b, &v)
	return v, err
}
