package collect

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/cli"
)

// PricesOptions is a one-shot fetch for a person checking what Bursar sees.
type PricesOptions struct {
	Source   string        // a kind from Kinds; skypilot (or reserved for .yaml) when only Files are given
	Region   string        // for azure, aws-*, and to narrow gcp
	Files    []string      // for skypilot and reserved
	Endpoint string        // API endpoint override
	Output   string        // one of Formats
	Timeout  time.Duration // of the whole fetch; 0: DefaultTimeout
}

// DefaultTimeout bounds one fetch of a source, every page of it, in `collector prices` and in
// `collector run` when the config sets none.
const DefaultTimeout = time.Minute

func (o PricesOptions) source() SourceConfig {
	kind := o.Source
	if kind == "" && len(o.Files) > 0 {
		kind = "skypilot"
		if ext := strings.ToLower(filepath.Ext(o.Files[0])); ext == ".yaml" || ext == ".yml" {
			kind = "reserved"
		}
	}
	return SourceConfig{Kind: kind, Region: o.Region, Files: o.Files, Endpoint: o.Endpoint}
}

// Prices fetches one source at time at and writes its offers to out; a summary of skipped and
// unmapped rows goes to errOut, so the offers stay machine-readable.
func Prices(ctx context.Context, o PricesOptions, at time.Time, out, errOut io.Writer) error {
	if o.Output != "" && !slices.Contains(Formats, o.Output) {
		return fmt.Errorf("prices: --output %q: use %s", o.Output, cli.Or(Formats))
	}
	sc := o.source()
	if field, err := sc.check(); err != nil {
		return fmt.Errorf("prices: %s: %w", flagFor(field), err)
	}
	src, err := sc.Build(ctx)
	if err != nil {
		return err
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := withFetchDeadline(ctx, timeout, "--timeout")
	defer cancel()
	cat, err := src.Fetch(ctx, at)
	if err != nil {
		return err
	}
	if len(cat.Offers) == 0 {
		summarize(errOut, 0, cat.Skipped, cat.Unknown)
		return fmt.Errorf("prices: %s answered with no offers: check --region and --endpoint, and the rows skipped above", src.Name())
	}
	if err := WriteOffers(out, o.Output, cat.Offers); err != nil {
		return err
	}
	summarize(errOut, len(cat.Offers), cat.Skipped, cat.Unknown)
	for _, w := range cat.Warnings {
		fmt.Fprintln(errOut, "warning:", w)
	}
	return nil
}

func flagFor(field string) string {
	switch field {
	case "kind":
		return "--source"
	case "files":
		return "--file"
	}
	return "--" + field
}

func summarize(w io.Writer, offers int, skipped, unknown map[string]int) {
	fmt.Fprintf(w, "%d offers", offers)
	if len(skipped) > 0 {
		fmt.Fprintf(w, "; skipped rows: %s", counts(skipped))
	}
	if len(unknown) > 0 {
		fmt.Fprintf(w, "; UNMAPPED GPU names (add them to internal/pricing): %s", counts(unknown))
	}
	fmt.Fprintln(w)
}

func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
