package pricesource

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/pricing"
)

// SkyPilotFiles reads price catalogs in SkyPilot's vms.csv format (schema v7). Several files
// are read as one catalog, so that GCP host VM rows (a2, a3, g2 machine types, priced without
// their GPUs) can be joined with GCP accelerator rows (priced without a host).
type SkyPilotFiles struct {
	Paths    []string
	Provider string // aws, gcp, azure, lambda, runpod...; from the file name ("aws_vms.csv") when empty
	MaxBytes int64  // per file; DefaultMaxFileBytes when 0
}

// Name identifies the source in metrics and events.
// It names the files without their directories, so events do not carry local paths.
func (s *SkyPilotFiles) Name() string {
	names := make([]string, len(s.Paths))
	for i, p := range s.Paths {
		names[i] = filepath.Base(p)
	}
	return "skypilot-file:" + strings.Join(names, ",")
}

// Fetch reads and normalizes the files, streaming: rows become offers as they are read, so
// memory follows the offers, not the file. Any malformed row fails the fetch with its
// file:line, and so does a file with no rows or a catalog with no GPU offer: an empty price
// file is a mistake, never a market with nothing on sale.
func (s *SkyPilotFiles) Fetch(ctx context.Context, at time.Time) (pricing.Catalog, error) {
	n := newSkyNormalizer(s.Name(), at)
	for _, p := range s.Paths {
		if err := ctx.Err(); err != nil {
			return pricing.Catalog{}, err
		}
		if err := s.readFile(p, n); err != nil {
			return pricing.Catalog{}, err
		}
	}
	cat, err := n.finish()
	if err != nil {
		return pricing.Catalog{}, &Error{Source: s.Name(), Kind: KindInvalid, Err: err}
	}
	if len(cat.Offers) == 0 {
		return pricing.Catalog{}, &Error{Source: s.Name(), Where: strings.Join(s.Paths, ","), Kind: KindInvalid,
			Err: fmt.Errorf("no GPU offers in %d rows (skipped: %s; unmapped GPUs: %d): "+
				"give a SkyPilot vms.csv with GPU rows", n.rows, countList(cat.Skipped), cat.UnknownCount())}
	}
	cat.Sort()
	return cat, nil
}

// readFile streams one catalog file into n.
func (s *SkyPilotFiles) readFile(p string, n *skyNormalizer) error {
	provider := s.Provider
	if provider == "" {
		provider = providerFromFile(p)
	}
	if provider == "" {
		return &Error{Source: s.Name(), Where: p, Kind: KindClient,
			Err: errors.New("cannot tell the provider from the file name; name it like aws_vms.csv or set the provider")}
	}
	f, err := openPriceFile(p, s.MaxBytes)
	if err != nil {
		return &Error{Source: s.Name(), Where: p, Kind: fileErrorKind(err, KindClient), Err: err}
	}
	defer f.Close()
	invalid := false
	rows, err := readSkyPilot(f, p, func(r skyRow) error {
		r.provider = provider
		if err := n.add(r); err != nil {
			invalid = true
			return err
		}
		return nil
	})
	switch {
	case invalid:
		return &Error{Source: s.Name(), Kind: KindInvalid, Err: err}
	case err != nil:
		return &Error{Source: s.Name(), Kind: fileErrorKind(err, KindDecode), Err: err}
	case rows == 0:
		return &Error{Source: s.Name(), Where: p, Kind: KindInvalid,
			Err: errors.New("no rows after the header: the catalog is empty")}
	}
	return nil
}

// fileErrorKind is KindTooLarge for a file over its cap, otherwise def.
func fileErrorKind(err error, def Kind) Kind {
	var tl *FileTooLargeError
	if errors.As(err, &tl) {
		return KindTooLarge
	}
	return def
}

// countList writes counts as "a=1, b=2" in key order, or "none".
func countList(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.Itoa(m[k])
	}
	return strings.Join(parts, ", ")
}

// providerFromFile reads "aws" from ".../aws_vms_gpu_subset.csv" or ".../aws/vms.csv".
func providerFromFile(path string) string {
	base := filepath.Base(path)
	if p, _, ok := strings.Cut(base, "_"); ok && p != "vms.csv" {
		return strings.ToLower(p)
	}
	return strings.ToLower(filepath.Base(filepath.Dir(path)))
}

// skyRow is one catalog row with its origin, for errors.
type skyRow struct {
	file                      string
	line                      int
	provider                  string
	instanceType, accelerator string
	count                     string
	region, zone              string
	price, spotPrice          string
}

// clone copies the row's strings out of the CSV line they point into, so that a row kept
// until the end of the read does not keep its whole line (GPU info JSON and all) alive.
func (r skyRow) clone() skyRow {
	return skyRow{file: r.file, line: r.line, provider: r.provider, instanceType: strings.Clone(r.instanceType),
		accelerator: strings.Clone(r.accelerator), count: strings.Clone(r.count), region: strings.Clone(r.region),
		zone: strings.Clone(r.zone), price: strings.Clone(r.price), spotPrice: strings.Clone(r.spotPrice)}
}

// where is the row's file:line, built only when an offer or an error needs it.
func (r skyRow) where() string { return r.file + ":" + strconv.Itoa(r.line) }

var skyColumns = []string{"InstanceType", "AcceleratorName", "AcceleratorCount", "Region", "Price", "SpotPrice"}

// csvError names the file and line of a CSV syntax error ("aws_vms.csv:7: bare \" in a
// field"), so an operator can open the file there.
func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d: column %d: %w", name, pe.StartLine, pe.Column, pe.Err)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// skyColumnIndex is where each column the parser reads sits in a file's header (-1: absent).
type skyColumnIndex struct {
	instanceType, accelerator, count, region, zone, price, spot int
}

// readSkyPilot reads a catalog by column name, so files whose columns are in a different
// order (SkyPilot's per-cloud files differ) read the same, and hands each row to row as it is
// read. Bare CR line ends are read as line ends. It returns the number of data rows.
func readSkyPilot(r io.Reader, name string, row func(skyRow) error) (int, error) {
	cr := csv.NewReader(newCRReader(r))
	cr.FieldsPerRecord = 0
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		return 0, fmt.Errorf("reading header: %w", csvError(name, err))
	}
	idx, err := skyHeader(header, name)
	if err != nil {
		return 0, err
	}
	get := func(rec []string, i int) string {
		if i >= 0 && i < len(rec) {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	for rows := 0; ; rows++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return rows, csvError(name, err)
		}
		line, _ := cr.FieldPos(0)
		err = row(skyRow{file: name, line: line,
			instanceType: get(rec, idx.instanceType), accelerator: get(rec, idx.accelerator),
			count: get(rec, idx.count), region: get(rec, idx.region), zone: get(rec, idx.zone),
			price: get(rec, idx.price), spotPrice: get(rec, idx.spot)})
		if err != nil {
			return rows, err
		}
	}
}

// skyHeader finds the columns; every one but AvailabilityZone is required.
func skyHeader(header []string, name string) (skyColumnIndex, error) {
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	for _, c := range skyColumns {
		if _, ok := col[c]; !ok {
			return skyColumnIndex{}, fmt.Errorf("%s:1: missing column %q (want SkyPilot catalog schema v7)", name, c)
		}
	}
	zone, ok := col["AvailabilityZone"]
	if !ok {
		zone = -1
	}
	return skyColumnIndex{instanceType: col["InstanceType"], accelerator: col["AcceleratorName"],
		count: col["AcceleratorCount"], region: col["Region"], zone: zone, price: col["Price"], spot: col["SpotPrice"]}, nil
}
