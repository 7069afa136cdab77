package collect

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/pricing"
)

// Formats lists the output formats of WriteOffers.
var Formats = cli.Formats

// offerColumns name the fields of an offer the same in every format, and as price.observed
// names them (usd_per_hour).
var offerColumns = []string{"provider", "region", "zone", "instance_type", "gpu", "gpu_count",
	"gpu_memory_gb", "market", "usd_per_hour", "usd_per_gpu_hour", "gpu_only", "source", "observed_at"}

// WriteOffers prints offers for a person (table) or a program (json, yaml, csv: one row per
// offer, the fields named by offerColumns).
func WriteOffers(w io.Writer, format string, offers []pricing.Offer) error {
	if format != "table" && format != "" {
		rows := make([]cli.Row, len(offers))
		for i, o := range offers {
			rows[i] = offerRow(o, format == "csv")
		}
		return cli.Write(w, format, offerColumns, rows)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tREGION\tZONE\tINSTANCE TYPE\tGPU\tCOUNT\tMARKET\tUSD/H\tUSD/GPU-H")
	for _, o := range offers {
		name := o.InstanceType
		if o.GPUOnly {
			name += " (gpu only)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%.4f\t%.4f\n", o.Provider, o.Region, o.Zone,
			name, o.GPU, o.GPUCount, o.Market, o.PricePerHour, o.PricePerGPUHour())
	}
	return tw.Flush()
}

// offerRow is one offer by offerColumns: all text (prices in full) for CSV, typed for JSON and
// YAML.
func offerRow(o pricing.Offer, text bool) cli.Row {
	rec := offerRecord(o)
	row := cli.Row{}
	for i, c := range offerColumns {
		row[c] = rec[i]
	}
	if text {
		return row
	}
	row["gpu_count"], row["gpu_memory_gb"], row["gpu_only"] = o.GPUCount, o.GPUMemoryGB, o.GPUOnly
	row["usd_per_hour"], row["usd_per_gpu_hour"] = o.PricePerHour, o.PricePerGPUHour()
	return row
}

func offerRecord(o pricing.Offer) []string {
	return []string{o.Provider, o.Region, o.Zone, o.InstanceType, o.GPU, strconv.Itoa(o.GPUCount),
		strconv.Itoa(o.GPUMemoryGB), string(o.Market), strconv.FormatFloat(o.PricePerHour, 'f', -1, 64),
		strconv.FormatFloat(o.PricePerGPUHour(), 'f', -1, 64), strconv.FormatBool(o.GPUOnly), o.Source,
		o.ObservedAt.UTC().Format(time.RFC3339)}
}
