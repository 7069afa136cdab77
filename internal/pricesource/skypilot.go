package pricesource

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// Fetch reads and normalizes the files. Any malformed row fails the fetch with its file:line.
func (s *SkyPilotFiles) Fetch(ctx context.Context, at time.Time) (pricing.Catalog, error) {
	var rows []skyRow
	for _, p := range s.Paths {
		if err := ctx.Err(); err != nil {
			return pricing.Catalog{}, err
		}
		f, err := os.Open(p)
		if err != nil {
			return pricing.Catalog{}, &Error{Source: s.Name(), Where: p, Kind: KindClient, Err: err}
		}
		got, err := parseSkyPilot(f, p)
		f.Close()
		if err != nil {
			return pricing.Catalog{}, &Error{Source: s.Name(), Kind: KindDecode, Err: err}
		}
		provider := s.Provider
		if provider == "" {
			provider = providerFromFile(p)
		}
		if provider == "" {
			return pricing.Catalog{}, &Error{Source: s.Name(), Where: p, Kind: KindClient,
				Err: errors.New("cannot tell the provider from the file name; name it like aws_vms.csv or set the provider")}
		}
		for i := range got {
			got[i].provider = provider
		}
		rows = append(rows, got...)
	}
	var cat pricing.Catalog
	if err := normalizeSkyPilot(rows, s.Name(), at, &cat); err != nil {
		return pricing.Catalog{}, &Error{Source: s.Name(), Kind: KindInvalid, Err: err}
	}
	cat.Sort()
	return cat, nil
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
	where                     string // file:line
	provider                  string
	instanceType, accelerator string
	count                     string
	region, zone              string
	price, spotPrice          string
	gpuMemoryMiB              string
}

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

// parseSkyPilot reads a catalog by column name, so files whose columns are in a different
// order (SkyPilot's per-cloud files differ) read the same.
func parseSkyPilot(r io.Reader, name string) ([]skyRow, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 0
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("reading header: %w", csvError(name, err))
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	for _, c := range skyColumns {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("%s:1: missing column %q (want SkyPilot catalog schema v7)", name, c)
		}
	}
	get := func(rec []string, c string) string {
		if i, ok := col[c]; ok && i < len(rec) {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	var rows []skyRow
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, csvError(name, err)
		}
		line, _ := cr.FieldPos(0)
		rows = append(rows, skyRow{where: name + ":" + strconv.Itoa(line),
			instanceType: get(rec, "InstanceType"), accelerator: get(rec, "AcceleratorName"),
			count: get(rec, "AcceleratorCount"), region: get(rec, "Region"), zone: get(rec, "AvailabilityZone"),
			price: get(rec, "Price"), spotPrice: get(rec, "SpotPrice"), gpuMemoryMiB: get(rec, "GpuMemoryMiBPerGpu")})
	}
}
