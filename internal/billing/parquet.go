package billing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// parquetRecords reads a Parquet dataset. Flat columns become cells as a CSV export would write
// them: timestamps (which must be adjusted to UTC) as RFC 3339, decimals and floats as numbers.
// A map column (AWS writes Tags as map<string,string>) becomes a JSON object. Other nested
// columns are provider extras and are passed over.
func parquetRecords(name string, data []byte) (recs []Record, err error) {
	defer func() { // the decoder can panic on a damaged file; that is the file's fault, not a crash
		if p := recover(); p != nil {
			recs, err = nil, &RowError{File: name, Err: fmt.Errorf("damaged Parquet file: %v", p)}
		}
	}()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, &RowError{File: name, Err: fmt.Errorf("not a readable Parquet file: %w", err)}
	}
	cols, err := parquetColumns(f.Schema())
	if err != nil {
		return nil, &RowError{File: name, Err: err}
	}
	header := make([]string, 0, len(cols))
	for _, c := range cols {
		if c.leaf || c.mapKey {
			header = append(header, c.name)
		}
	}
	if col, err := CheckHeader(header); err != nil {
		return nil, &RowError{File: name, Column: col, Err: err}
	}
	r := parquet.NewReader(bytes.NewReader(data))
	defer r.Close()
	buf := make([]parquet.Row, 64)
	for {
		n, rerr := r.ReadRows(buf)
		for _, row := range buf[:n] {
			rec, err := parquetRecord(cols, row)
			if err != nil {
				return nil, &RowError{File: name, Row: len(recs) + 1, Column: err.col, Err: err.err}
			}
			recs = append(recs, rec)
		}
		if errors.Is(rerr, io.EOF) {
			return recs, nil
		}
		if rerr != nil {
			return nil, &RowError{File: name, Row: len(recs) + 1, Err: fmt.Errorf("reading Parquet rows: %w", rerr)}
		}
	}
}

// pqColumn is how one Parquet leaf column maps to a FOCUS cell.
type pqColumn struct {
	name   string // top-level field
	leaf   bool   // a flat column
	mapKey bool   // the key leaf of a map column (its value leaf follows)
	mapVal bool
	typ    parquet.Type
}

// parquetColumns maps the schema's leaf columns, by column index.
func parquetColumns(s *parquet.Schema) ([]pqColumn, error) {
	paths := s.Columns()
	out := make([]pqColumn, len(paths))
	for i, p := range paths {
		leaf, ok := s.Lookup(p...)
		if !ok || leaf.ColumnIndex != i {
			return nil, fmt.Errorf("Parquet column %s: unexpected schema layout", strings.Join(p, "."))
		}
		c := pqColumn{name: p[0], typ: leaf.Node.Type()}
		switch {
		case len(p) == 1:
			c.leaf = true
		case len(p) == 3 && p[2] == "key":
			c.mapKey = true
		case len(p) == 3 && p[2] == "value":
			c.mapVal = true
		}
		out[i] = c
	}
	return out, nil
}

type cellError struct {
	col string
	err error
}

// parquetRecord turns one row's values into cells.
func parquetRecord(cols []pqColumn, row parquet.Row) (Record, *cellError) {
	rec := Record{}
	maps := map[string]map[string]string{}
	keys := map[string][]string{}
	vals := map[string][]string{}
	for _, v := range row {
		i := v.Column()
		if i < 0 || i >= len(cols) {
			continue
		}
		c := cols[i]
		if !c.leaf && !c.mapKey && !c.mapVal {
			continue
		}
		s, err := parquetCell(c.typ, v)
		if err != nil {
			return nil, &cellError{c.name, err}
		}
		switch {
		case c.leaf:
			rec[c.name] = s
		case c.mapKey && !v.IsNull():
			keys[c.name] = append(keys[c.name], s)
		case c.mapVal && !v.IsNull():
			vals[c.name] = append(vals[c.name], s)
		}
	}
	for name, ks := range keys {
		m := map[string]string{}
		for j, k := range ks {
			if j < len(vals[name]) {
				m[k] = vals[name][j]
			}
		}
		maps[name] = m
	}
	for _, c := range cols {
		if c.mapKey {
			rec[c.name] = ""
			if m := maps[c.name]; len(m) > 0 {
				b, _ := json.Marshal(m)
				rec[c.name] = string(b)
			}
		}
	}
	return rec, nil
}

// parquetCell renders one value as the text a CSV export would hold.
func parquetCell(t parquet.Type, v parquet.Value) (string, error) {
	if v.IsNull() {
		return "", nil
	}
	var lt format.LogicalTypeValue
	if l := t.LogicalType(); l != nil {
		lt = l.Value
	}
	switch l := lt.(type) {
	case *format.TimestampType:
		if !l.IsAdjustedToUTC {
			return "", errors.New("is a timestamp not adjusted to UTC; FOCUS times are UTC")
		}
		unit := time.Millisecond
		if l.Unit.Value != nil {
			unit = l.Unit.Value.Duration()
		}
		return time.Unix(0, 0).Add(time.Duration(v.Int64()) * unit).UTC().Format(time.RFC3339Nano), nil
	case *format.DecimalType:
		return parquetDecimal(v, int(l.Scale))
	}
	switch v.Kind() {
	case parquet.Boolean:
		return strconv.FormatBool(v.Boolean()), nil
	case parquet.Int32:
		return strconv.FormatInt(int64(v.Int32()), 10), nil
	case parquet.Int64:
		return strconv.FormatInt(v.Int64(), 10), nil
	case parquet.Float:
		return strconv.FormatFloat(float64(v.Float()), 'f', -1, 32), nil
	case parquet.Double:
		return strconv.FormatFloat(v.Double(), 'f', -1, 64), nil
	case parquet.ByteArray, parquet.FixedLenByteArray:
		return string(v.ByteArray()), nil
	}
	return "", fmt.Errorf("has Parquet type %s, which FOCUS columns do not use", v.Kind())
}

// parquetDecimal renders a DECIMAL value stored as an integer or big-endian bytes.
func parquetDecimal(v parquet.Value, scale int) (string, error) {
	if scale < 0 || scale > 76 {
		return "", fmt.Errorf("is a DECIMAL of scale %d; want 0 to 76", scale)
	}
	n := new(big.Int)
	switch v.Kind() {
	case parquet.Int32:
		n.SetInt64(int64(v.Int32()))
	case parquet.Int64:
		n.SetInt64(v.Int64())
	case parquet.ByteArray, parquet.FixedLenByteArray:
		b := v.ByteArray()
		n.SetBytes(b)
		if len(b) > 0 && b[0]&0x80 != 0 { // two's complement
			n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
		}
	default:
		return "", fmt.Errorf("is a DECIMAL stored as %s", v.Kind())
	}
	r := new(big.Rat).SetFrac(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
	return r.FloatString(scale), nil
}
