package billing

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/parquet-go/parquet-go"
)

// WriteParquet writes a FOCUS dataset as Parquet: FOCUS columns with their specification's
// types (Decimal as DOUBLE, DateTime as a UTC TIMESTAMP in milliseconds, String and JSON as
// strings), other columns as the Go type of their values (int64, float64 or string). Every column
// is optional, so a null cell (nil or "") is null.
func WriteParquet(w io.Writer, columns []string, rows []map[string]any) error {
	group := parquet.Group{}
	kinds := make(map[string]Type, len(columns))
	for _, c := range columns {
		node, kind := parquetNode(c, rows)
		group[c] = parquet.Optional(node)
		kinds[c] = kind
	}
	schema := parquet.NewSchema("focus", group)
	pw := parquet.NewWriter(w, schema, parquet.Compression(&parquet.Zstd))
	for i, r := range rows {
		row := make(map[string]any, len(columns))
		for _, c := range columns {
			v, err := parquetValue(kinds[c], r[c])
			if err != nil {
				return fmt.Errorf("row %d, column %s: %w", i+1, c, err)
			}
			if v != nil {
				row[c] = v
			}
		}
		if err := pw.Write(row); err != nil {
			return fmt.Errorf("writing Parquet row %d: %w", i+1, err)
		}
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("writing Parquet: %w", err)
	}
	return nil
}

// otherInt marks a non-FOCUS column of integers.
const otherInt Type = -1

// parquetNode is a column's Parquet type: the specification's for FOCUS columns, else from the
// values.
func parquetNode(name string, rows []map[string]any) (parquet.Node, Type) {
	if c, ok := Lookup(name); ok {
		switch c.Type {
		case Decimal:
			return parquet.Leaf(parquet.DoubleType), Decimal
		case DateTime:
			return parquet.Timestamp(parquet.Millisecond), DateTime
		}
		return parquet.String(), String
	}
	for _, r := range rows {
		switch r[name].(type) {
		case int, int64:
			return parquet.Int(64), otherInt
		case float64:
			return parquet.Leaf(parquet.DoubleType), Decimal
		case string:
			return parquet.String(), String
		}
	}
	return parquet.String(), String
}

// parquetValue converts a cell to the column's Go type; nil is null.
func parquetValue(kind Type, v any) (any, error) {
	if v == nil || v == "" {
		return nil, nil
	}
	switch kind {
	case Decimal:
		switch x := v.(type) {
		case float64:
			return x, nil
		case int64:
			return float64(x), nil
		case int:
			return float64(x), nil
		case string:
			return parseDecimal(x)
		}
	case DateTime:
		switch x := v.(type) {
		case time.Time:
			return x.UTC(), nil
		case string:
			return parseTime(x)
		}
	case otherInt:
		switch x := v.(type) {
		case int64:
			return x, nil
		case int:
			return int64(x), nil
		}
	default:
		switch x := v.(type) {
		case string:
			return x, nil
		case float64:
			return strconv.FormatFloat(x, 'f', -1, 64), nil
		case int64:
			return strconv.FormatInt(x, 10), nil
		}
	}
	return nil, fmt.Errorf("value %v (%T) does not fit the column", v, v)
}
