package billing

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// MaxFileBytes bounds one export file after decompression, so a wrong path or a zip bomb fails
// instead of filling memory. Providers split their exports into files well under it.
const MaxFileBytes = 4 << 30

// Export is one file of a billing export, parsed and checked.
type Export struct {
	File    string
	Digest  string // sha256 of the file's decompressed bytes: the same file always has the same one
	Charges []Charge
}

// ReadFile reads one export file: CSV or Parquet, either gzipped.
func ReadFile(path string) (*Export, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening billing export: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return Parse(path, data)
}

// Parse reads one export file's bytes (name is for errors): gzip is undone first, then a file
// that starts with Parquet's magic is read as Parquet and anything else as CSV. Every row is
// checked before any is returned, so a file with one bad row gives an error and no charges.
func Parse(name string, data []byte) (*Export, error) {
	if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, &RowError{File: name, Err: fmt.Errorf("not a gzip file: %w", err)}
		}
		if data, err = io.ReadAll(io.LimitReader(zr, MaxFileBytes+1)); err != nil {
			return nil, &RowError{File: name, Err: fmt.Errorf("decompressing: %w", err)}
		}
	}
	if len(data) > MaxFileBytes {
		return nil, &RowError{File: name, Err: fmt.Errorf("over %d bytes; split the export", MaxFileBytes)}
	}
	var recs []Record
	var err error
	if bytes.HasPrefix(data, []byte("PAR1")) {
		recs, err = parquetRecords(name, data)
	} else {
		recs, err = csvRecords(name, data)
	}
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	ex := &Export{File: name, Digest: hex.EncodeToString(sum[:]), Charges: make([]Charge, 0, len(recs))}
	for i, r := range recs {
		if col, err := Check(r); err != nil {
			return nil, &RowError{File: name, Row: i + 1, Column: col, Err: err}
		}
		c := charge(r)
		c.File = name
		ex.Charges = append(ex.Charges, c)
	}
	return ex, nil
}

// csvRecords reads a CSV dataset with a header row (a UTF-8 byte order mark, which Azure's
// exports start with, is skipped).
func csvRecords(name string, data []byte) ([]Record, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	cr := csv.NewReader(bytes.NewReader(data))
	cr.ReuseRecord = false
	header, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &RowError{File: name, Err: errors.New("empty file; want a header row of FOCUS column names")}
		}
		return nil, &RowError{File: name, Err: fmt.Errorf("reading the header: %w", err)}
	}
	for i := range header {
		header[i] = strings.TrimSpace(header[i])
	}
	if col, err := CheckHeader(header); err != nil {
		return nil, &RowError{File: name, Column: col, Err: err}
	}
	var out []Record
	for n := 1; ; n++ {
		cells, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, &RowError{File: name, Row: n, Err: err}
		}
		r := make(Record, len(header))
		for i, c := range header {
			r[c] = cells[i]
		}
		out = append(out, r)
	}
}

// Files lists the export files under path: the file itself, or every .csv, .csv.gz, .parquet
// and .parquet.gz below a directory, in name order.
func Files(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("billing export: %w", err)
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	var out []string
	err = filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		n := strings.ToLower(strings.TrimSuffix(d.Name(), ".gz"))
		if !d.IsDir() && (strings.HasSuffix(n, ".csv") || strings.HasSuffix(n, ".parquet")) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing billing exports under %s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no .csv, .csv.gz, .parquet or .parquet.gz files under %s", path)
	}
	sort.Strings(out)
	return out, nil
}
