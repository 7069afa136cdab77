package jobreplay

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

// Options are the flags of `arbiter replay --jobs`.
type Options struct {
	TraceDir string
	Policies string
	Deadline time.Duration
	Work     time.Duration
	Overhead time.Duration
	Windows  int
	// Zones is "single" (each file its own market, JOBS.md's setting) or "all" (the job may
	// run in every file's zone).
	Zones  string
	Output string
}

// DefaultOptions are JOBS.md's tight setting: 48 h of work due in 52 h, 3 min per launch, 30
// windows per file.
func DefaultOptions() Options {
	return Options{Deadline: 52 * time.Hour, Work: 48 * time.Hour, Overhead: 3 * time.Minute, Windows: 30, Zones: "single", Output: "table"}
}

// Job turns the flags into the job to replay, at JOBS.md's prices.
func (o Options) Job() (Job, error) {
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"--deadline", o.Deadline}, {"--work", o.Work}, {"--overhead", o.Overhead}} {
		if d.v%time.Second != 0 || d.v < 0 {
			return Job{}, fmt.Errorf("%s %s must be a whole number of seconds, not negative", d.flag, d.v)
		}
	}
	if o.Work <= 0 || o.Deadline < o.Work+o.Overhead {
		return Job{}, fmt.Errorf("--work %s must be positive and --deadline %s at least --work plus --overhead (%s): "+
			"otherwise not even on-demand can meet it", o.Work, o.Deadline, o.Work+o.Overhead)
	}
	if o.Windows < 1 {
		return Job{}, fmt.Errorf("--windows %d: give at least 1 window per file", o.Windows)
	}
	return Job{Work: int64(o.Work / time.Second), Deadline: int64(o.Deadline / time.Second),
		Overhead: int64(o.Overhead / time.Second), SpotPrice: RefSpotPrice, ODPrice: RefODPrice}, nil
}

// Report is the JSON that `arbiter replay --jobs -o json` prints.
type Report struct {
	Trace     string   `json:"trace"`
	Zones     string   `json:"zones"`
	Files     []string `json:"files"`
	DeadlineS int64    `json:"deadline_s"`
	WorkS     int64    `json:"work_s"`
	OverheadS int64    `json:"overhead_s"`
	Results   []Result `json:"results"`
}

// Replay loads the trace folder, replays the policies and writes the report to w.
func Replay(ctx context.Context, o Options, w io.Writer) error {
	if o.Output != "table" && o.Output != "json" {
		return fmt.Errorf("--output %q: choose table or json", o.Output)
	}
	if o.Zones != "single" && o.Zones != "all" {
		return fmt.Errorf("--zones %q: choose single (each file its own market) or all (every file a zone of one market)", o.Zones)
	}
	names, err := ParsePolicies(o.Policies)
	if err != nil {
		return err
	}
	job, err := o.Job()
	if err != nil {
		return err
	}
	if o.TraceDir == "" {
		return fmt.Errorf("--trace is required: a folder of cant-be-late trace files")
	}
	ms, err := LoadMarkets(os.DirFS(o.TraceDir), ".")
	if err != nil {
		return fmt.Errorf("loading trace %s: %w", o.TraceDir, err)
	}
	rep := Report{Trace: traceName(o.TraceDir), Zones: o.Zones, DeadlineS: job.Deadline, WorkS: job.Work, OverheadS: job.Overhead}
	for _, m := range ms {
		rep.Files = append(rep.Files, m.Name)
	}
	if o.Zones == "all" {
		rep.Results, err = EvaluateZones(ctx, job, rep.Trace, ms, o.Windows, names)
	} else {
		rep.Results, err = Evaluate(ctx, job, Windows(ms, o.Windows), names)
	}
	if err != nil {
		return err
	}
	if o.Output == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return WriteTable(w, rep)
}

func traceName(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return filepath.Base(abs)
	}
	return dir
}

// WriteTable prints the policies side by side, one row each.
func WriteTable(w io.Writer, rep Report) error {
	fmt.Fprintf(w, "trace %s (%d files, zones %s): work %s, deadline %s, overhead %s per launch\n", rep.Trace, len(rep.Files), rep.Zones,
		time.Duration(rep.WorkS)*time.Second, time.Duration(rep.DeadlineS)*time.Second, time.Duration(rep.OverheadS)*time.Second)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "policy\twindows\tmean $\tcost % of on-demand\tdeadlines met %\t"
	if rep.Zones == "all" {
		head += "best single zone\tits mean $\tsaving %\t"
	}
	fmt.Fprintln(tw, head)
	for _, r := range rep.Results {
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.1f\t%.1f\t", r.Policy, r.Windows, r.MeanCost, r.CostPct, r.DeadlinesMetPct)
		if rep.Zones == "all" {
			fmt.Fprintf(tw, "%s\t%.2f\t%.1f\t", r.BestZone, r.BestZoneCost, r.SavingPct)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}
