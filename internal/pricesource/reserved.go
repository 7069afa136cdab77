package pricesource

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/bursar-dev/bursar/internal/pricing"
)

// ReservedFile prices committed capacity at what it really costs: a YAML list of contracts,
// each offered in the reserved market while its term runs.
//
//	contracts:
//	  - name: coreweave-h100-2026
//	    provider: coreweave
//	    region: us-east-04
//	    instance_type: HGX-H100-8x
//	    gpu: H100-80GB
//	    gpu_count: 8
//	    hourly_usd: 35.00      # per instance-hour
//	    start: 2026-01-01T00:00:00Z
//	    end: 2027-01-01T00:00:00Z
type ReservedFile struct {
	Path     string
	MaxBytes int64 // DefaultMaxFileBytes when 0
}

// Name identifies the source in metrics and events.
func (r *ReservedFile) Name() string { return "reserved-file:" + r.Path }

// Contract is one reserved capacity commitment.
type Contract struct {
	Name         string    `yaml:"name"`
	Provider     string    `yaml:"provider"`
	Region       string    `yaml:"region"`
	Zone         string    `yaml:"zone"`
	InstanceType string    `yaml:"instance_type"`
	GPU          string    `yaml:"gpu"`
	GPUCount     int       `yaml:"gpu_count"`
	HourlyUSD    float64   `yaml:"hourly_usd"`
	Currency     string    `yaml:"currency"`
	Start        time.Time `yaml:"start"`
	End          time.Time `yaml:"end"`
	Line         int       `yaml:"-"` // where the contract starts in its file
}

// Fetch reads the file and offers the contracts whose term contains at.
func (r *ReservedFile) Fetch(ctx context.Context, at time.Time) (pricing.Catalog, error) {
	data, err := readPriceFile(r.Path, r.MaxBytes)
	if err != nil {
		return pricing.Catalog{}, &Error{Source: r.Name(), Kind: fileErrorKind(err, KindClient), Err: err}
	}
	contracts, err := ParseContracts(data, r.Path)
	if err != nil {
		return pricing.Catalog{}, &Error{Source: r.Name(), Kind: KindDecode, Err: err}
	}
	var cat pricing.Catalog
	for _, c := range contracts {
		if at.Before(c.Start) || !at.Before(c.End) {
			cat.Skip("outside_term")
			continue
		}
		gpu, _ := pricing.Canonical(c.GPU)
		o := pricing.Offer{Provider: c.Provider, Region: c.Region, Zone: c.Zone, InstanceType: c.InstanceType,
			GPU: gpu.Name, GPUCount: c.GPUCount, GPUMemoryGB: gpu.MemoryGB, Market: pricing.Reserved,
			PricePerHour: c.HourlyUSD, Source: r.Name(), ObservedAt: at}
		if err := cat.AddFrom(o, c.Currency, r.Path+":"+strconv.Itoa(c.Line)); err != nil {
			return pricing.Catalog{}, &Error{Source: r.Name(), Kind: KindInvalid, Err: fmt.Errorf("contract %q: %w", c.Name, err)}
		}
	}
	cat.Sort()
	return cat, nil
}

// ParseContracts decodes a contracts file strictly: no contracts, unknown fields, a GPU that is
// not canonical, a price not written as a decimal, a missing field or an empty term are errors
// naming file:line and the field.
func ParseContracts(data []byte, name string) ([]Contract, error) {
	var doc struct {
		Contracts []yaml.Node `yaml:"contracts"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(doc.Contracts) == 0 {
		return nil, fmt.Errorf("%s: no contracts: list them under contracts: (see docs/collector.md)", name)
	}
	out := make([]Contract, 0, len(doc.Contracts))
	for i := range doc.Contracts {
		n := &doc.Contracts[i]
		if v := fieldValue(n, "hourly_usd"); v != nil && v.Kind == yaml.ScalarNode {
			if _, err := pricing.ParsePrice(v.Value); err != nil {
				return nil, fmt.Errorf("%s:%d: contract %d, field \"hourly_usd\": %w", name, v.Line, i+1, err)
			}
		}
		c := Contract{Line: n.Line}
		if err := decodeStrict(n, &c); err != nil {
			return nil, fmt.Errorf("%s:%d: contract %d: %w", name, n.Line, i+1, err)
		}
		if c.InstanceType == "" {
			c.InstanceType = fmt.Sprintf("%dx%s", c.GPUCount, c.GPU)
		}
		if c.Currency == "" {
			c.Currency = "USD"
		}
		if field, err := c.check(); err != nil {
			return nil, fmt.Errorf("%s:%d: contract %d, field %q: %w", name, fieldLine(n, field), i+1, field, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// decodeStrict decodes one node, rejecting unknown fields (yaml.v3 checks KnownFields only on
// Decoder.Decode, so the node is re-encoded and decoded through one).
func decodeStrict(n *yaml.Node, into any) error {
	b, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	err = dec.Decode(into)
	if err != nil {
		// Line numbers in the re-encoded node are relative to it; the caller adds the node's.
		return errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	return nil
}

func (c Contract) check() (string, error) {
	switch {
	case c.Provider == "":
		return "provider", errors.New("required")
	case c.Region == "":
		return "region", errors.New("required")
	case c.GPU == "":
		return "gpu", errors.New("required")
	case c.GPUCount <= 0:
		return "gpu_count", errors.New("must be at least 1")
	case c.HourlyUSD <= 0:
		return "hourly_usd", errors.New("must be a positive price per instance-hour")
	case c.Start.IsZero() || c.End.IsZero() || !c.End.After(c.Start):
		return "end", errors.New("start and end are required and end must be after start")
	}
	if _, ok := pricing.Canonical(c.GPU); !ok {
		return "gpu", fmt.Errorf("%q is not a canonical GPU name (e.g. H100-80GB, A100-40GB, L4)", c.GPU)
	}
	return "", nil
}

// fieldLine is the line of field in a mapping node, or the node's own line.
func fieldLine(n *yaml.Node, field string) int {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == field {
			return n.Content[i].Line
		}
	}
	return n.Line
}

// fieldValue is the value node of field in a mapping node, nil when absent.
func fieldValue(n *yaml.Node, field string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == field {
			return n.Content[i+1]
		}
	}
	return nil
}
