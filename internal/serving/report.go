package serving

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Run is one demand trace replayed through the policies: what `arbiter replay --serving` prints
// per trace, in its JSON shape.
type Run struct {
	Demand      string   `json:"demand"`
	DemandScale float64  `json:"demand_scale"`
	Profile     string   `json:"profile"`
	Capacity    string   `json:"capacity"`
	Windows     int      `json:"windows"`
	WindowTicks int      `json:"window_ticks"`
	ColdStart   int      `json:"cold_start_ticks"`
	Seed        uint64   `json:"seed"`
	Offsets     []int    `json:"offsets"`
	Sources     []Source `json:"sources"`
	Notes       []string `json:"notes"`
	Results     []Result `json:"results"`
}

// Replay loads the inputs of p and replays the named policies on them.
func Replay(ctx context.Context, p Paths, cfg Config, names []string) (*Run, error) {
	in, err := Load(p)
	if err != nil {
		return nil, err
	}
	res, err := Evaluate(ctx, in, cfg, names)
	if err != nil {
		return nil, fmt.Errorf("demand %s: %w", in.Demand.Name, err)
	}
	offsets, _ := Offsets(in, cfg)
	return &Run{
		Demand: in.Demand.Name, DemandScale: in.Scale, Profile: in.Profile.Describe(), Capacity: in.Capacity.Name,
		Windows: len(offsets), WindowTicks: cfg.Length, ColdStart: cfg.ColdStart, Seed: cfg.Seed, Offsets: offsets,
		Sources: in.Sources, Notes: in.Notes, Results: res,
	}, nil
}

// WriteTable prints a run: its inputs, then one row per policy (means over the windows).
func (r *Run) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "demand %s x %.4g, %d windows of %d min (offsets %s), cold start %d min, seed %d\n",
		r.Demand, r.DemandScale, r.Windows, r.WindowTicks, joinInts(r.Offsets), r.ColdStart, r.Seed)
	fmt.Fprintf(w, "profile %s\ncapacity %s\n", r.Profile, r.Capacity)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  %s\n", n)
	}
	fmt.Fprintf(w, "sources:\n%s", DescribeSources(r.Sources))
	for _, res := range r.Results {
		switch {
		case res.ProvenOptimal:
			fmt.Fprintf(w, "%s: solved exactly on every window\n", res.Policy)
		case res.OptimalityGapPct > 0:
			fmt.Fprintf(w, "%s: a schedule, not proven optimal: its cost is within %.1f %% of a lower bound on the optimum (mean over windows)\n",
				res.Policy, res.OptimalityGapPct)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\t$/M tokens\tcost % of od-autoscale\tavailability %\tunserved %\tspot %\tmoves/h\tGPU-h by type\tforecast MAPE %\t")
	for _, res := range r.Results {
		mape := "-"
		if res.ForecastMAPEPct > 0 {
			mape = fmt.Sprintf("%.1f", res.ForecastMAPEPct)
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%.1f\t%.2f\t%.3f\t%.1f\t%.2f\t%s\t%s\t\n", res.Policy, res.CostUSDPerMillionTokens,
			res.CostPctOfODAutoscale, res.CapacityAvailabilityPct, res.UnservedTokensPct, res.SpotSharePct,
			res.MovesPerHour, gpuHours(res.GPUHoursByType), mape)
	}
	return tw.Flush()
}

// gpuHours prints GPU-hours per type, in type order.
func gpuHours(m map[string]float64) string {
	var parts []string
	for _, t := range sortedKeys(m) {
		if m[t] > 0 {
			parts = append(parts, fmt.Sprintf("%s %.0f", t, m[t]))
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, ", ")
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}
