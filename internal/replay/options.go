package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"
)

// Options are the flags of `arbiter replay`.
type Options struct {
	TraceDir       string
	BinaryCapacity bool
	Policies       string
	Target         int
	Extra          int
	ColdStart      time.Duration
	Tick           time.Duration
	Window         time.Duration
	Windows        int
	Seed           uint64
	Offsets        []int
	ODPriceRatio   float64
	Output         string
}

// DefaultOptions are the SkyServe simulation's settings: 3 replicas, one spare, 2 min cold start,
// 30 s ticks, ten 24 h windows, on-demand at 3x spot.
func DefaultOptions() Options {
	return Options{
		Target: 3, Extra: 1, ColdStart: 120 * time.Second, Tick: 30 * time.Second,
		Window: 24 * time.Hour, Windows: 10, ODPriceRatio: 3, Output: "table",
	}
}

// Config turns the flag values into a replay configuration: the window is cut to whole ticks and
// the cold start rounded up to whole ticks (an instance is never ready early).
func (o Options) Config() (Config, error) {
	if o.Tick < time.Second || o.Tick%time.Second != 0 {
		return Config{}, fmt.Errorf("--tick %s must be a whole number of seconds", o.Tick)
	}
	if o.ColdStart < 0 || o.Window <= 0 {
		return Config{}, fmt.Errorf("--cold-start %s must not be negative and --window %s must be positive", o.ColdStart, o.Window)
	}
	cfg := Config{
		Rules: Rules{
			Target: o.Target, Extra: o.Extra, ODRatio: o.ODPriceRatio,
			ColdStart: int((o.ColdStart + o.Tick - 1) / o.Tick),
			Window:    int(o.Window / o.Tick),
			Tick:      o.Tick,
		},
		Offsets: o.Offsets, Windows: o.Windows, Seed: o.Seed,
	}
	return cfg, cfg.Rules.validate()
}

// Run loads the trace, replays the policies and writes the results to w as a table or JSON.
func Run(ctx context.Context, o Options, w io.Writer) error {
	if o.Output != "table" && o.Output != "json" {
		return fmt.Errorf("--output %q: choose table or json", o.Output)
	}
	specs, err := ParsePolicies(o.Policies)
	if err != nil {
		return err
	}
	cfg, err := o.Config()
	if err != nil {
		return err
	}
	if o.TraceDir == "" {
		return fmt.Errorf("--trace is required: a folder with one JSON file per zone")
	}
	tr, err := LoadTrace(os.DirFS(o.TraceDir), ".", LoadOptions{TickSeconds: int(o.Tick / time.Second), Binary: o.BinaryCapacity})
	if err != nil {
		return fmt.Errorf("loading trace %s: %w", o.TraceDir, err)
	}
	if abs, err := filepath.Abs(o.TraceDir); err == nil {
		tr.Name = filepath.Base(abs)
	}
	results, err := Evaluate(ctx, tr, cfg, specs)
	if err != nil {
		return err
	}
	if o.Output == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(results)
	}
	return WriteTable(w, tr, cfg, o.Tick, results)
}

// WriteTable prints the policies side by side, one row each.
func WriteTable(w io.Writer, tr *Trace, cfg Config, tick time.Duration, results []Result) error {
	r := cfg.Rules
	windows := 0
	if len(results) > 0 {
		windows = results[0].Windows
	}
	fmt.Fprintf(w, "trace %s (%d zones, %d ticks): %d windows of %d ticks x %s, target %d, cold start %d ticks, on-demand %gx spot\n",
		tr.Name, len(tr.Zones), tr.Len, windows, r.Window, tick, r.Target, r.ColdStart, r.ODRatio)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tavailability %\tcost % of on-demand\t")
	for _, res := range results {
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t\n", res.Policy, res.AvailabilityPct, res.CostPct)
	}
	return tw.Flush()
}
