package collect

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/bursar-dev/bursar/internal/pricing"
)

// Formats lists the output formats of WriteOffers.
var Formats = []string{"table", "json", "csv"}

var offerColumns = []string{"provider", "region", "zone", "instance_type", "gpu", "gpu_count",
	"gpu_memory_gb", "market", "usd_per_hour", "usd_per_gpu_hour", "gpu_only", "source", "observed_at"}

// WriteOffers prints offers for a person (table) or a program (json, csv).
func WriteOffers(w io.Writer, format string, offers []pricing.Offer) error {
	switch format {
	case "json":
		type row struct {
			pricing.Offer
			PricePerGPUHour float64 `json:"price_per_gpu_hour"`
		}
		rows := make([]row, len(offers))
		for i, o := range offers {
			rows[i] = row{o, o.PricePerGPUHour()}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	case "csv":
		cw := csv.NewWriter(w)
		_ = cw.Write(offerColumns)
		for _, o := range offers {
			_ = cw.Write(offerRecord(o))
		}
		cw.Flush()
		return cw.Error()
	case "table", "":
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
	return fmt.Errorf("unknown output format %q: use table, json or csv", format)
}

func offerRecord(o pricing.Offer) []string {
	return []string{o.Provider, o.Region, o.Zone, o.InstanceType, o.GPU, strconv.Itoa(o.GPUCount),
		strconv.Itoa(o.GPUMemoryGB), string(o.Market), strconv.FormatFloat(o.PricePerHour, 'f', -1, 64),
		strconv.FormatFloat(o.PricePerGPUHour(), 'f', -1, 64), strconv.FormatBool(o.GPUOnly), o.Source,
		o.ObservedAt.UTC().Format(time.RFC3339)}
}
