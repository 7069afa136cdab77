package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/report"
)

// reportFlags are the flags every report takes.
type reportFlags struct {
	since, until, period string
	by                   string
	filters              []string
	fleetFile            string
	output               string
	chart                string
	basis                string // cost, tokens and savings (bindBasis)
}

func (f *reportFlags) bind(cmd *cobra.Command, defaultBy string, chart bool) {
	fl := cmd.Flags()
	fl.StringVar(&f.since, "since", "", "start of the window: RFC 3339 or a date (UTC)")
	fl.StringVar(&f.until, "until", "", "end of the window (default now)")
	fl.StringVar(&f.period, "period", "", "length of the window ending at --until, e.g. 24h, 7d, 2w (default 7d)")
	fl.StringVar(&f.by, "by", defaultBy, "group by: workload, location, provider, region, market, gpu, team (comma-separated; region and team come from --fleet)")
	fl.StringArrayVar(&f.filters, "filter", nil, "keep only dimension=value[,value...], e.g. --filter provider=aws (repeatable)")
	fl.StringVar(&f.fleetFile, "fleet", "bursar.yaml", "fleet file: locations' regions and where workloads may run")
	cli.OutputFlag(cmd, &f.output, report.Formats...)
	if chart {
		fl.StringVar(&f.chart, "chart", "", "also render a PNG chart to this file (markdown output embeds it)")
	}
}

// options builds report.Options; the fleet file is optional unless need says otherwise.
func (f *reportFlags) options(now time.Time, needFleet bool) (report.Options, error) {
	w, err := report.ParseWindow(f.since, f.until, f.period, now)
	if err != nil {
		return report.Options{}, err
	}
	by, err := report.ParseDims(f.by)
	if err != nil {
		return report.Options{}, err
	}
	filter := report.Filter{}
	for _, s := range f.filters {
		k, v, ok := strings.Cut(s, "=")
		d := report.Dim(strings.TrimSpace(k))
		if _, err := report.ParseDims(string(d)); !ok || err != nil || v == "" {
			return report.Options{}, fmt.Errorf("--filter %q: want dimension=value, e.g. provider=aws", s)
		}
		filter[d] = append(filter[d], strings.Split(v, ",")...)
	}
	basis, err := report.ParseBasis(f.basis)
	if err != nil {
		return report.Options{}, err
	}
	o := report.Options{Window: w, By: by, Filter: filter, Now: now, Basis: basis}
	why := o.NeedsFleet()
	if o.Fleet, err = loadFleet(f.fleetFile, needFleet || why != ""); err != nil {
		return report.Options{}, err
	}
	if why != "" && o.Fleet == nil {
		return report.Options{}, fmt.Errorf("%s", why)
	}
	return o, nil
}

// loadFleet reads the fleet file; a missing file is fine unless the report needs it.
func loadFleet(path string, need bool) (*fleet.Config, error) {
	if path == "" {
		return nil, nil
	}
	if _, err := os.Stat(path); os.IsNotExist(err) {
		if !need {
			return nil, nil
		}
		return nil, fmt.Errorf("fleet file %s does not exist: this report needs it; pass the file with --fleet", path)
	}
	return fleet.Load(path)
}

// open connects to the history the global flags name: the store, or its owner over NATS.
func open(ctx context.Context, cmd *cobra.Command, g *cli.Globals) (report.Reporter, func() error, error) {
	log, err := g.Logger(cmd.ErrOrStderr())
	if err != nil {
		return nil, nil, err
	}
	natsOpts, err := g.NATSOptions(bus.RoleReport)
	if err != nil {
		return nil, nil, err
	}
	return report.Open(ctx, report.Source{DSN: g.ClickHouse, DataDir: g.DataDir, NATSURL: g.NATSURL(), NATS: natsOpts, Log: log,
		Verify: func(nc *nats.Conn) error { return g.CheckServerAuth(nc, log) }})
}

// emit writes the chart (when asked) and the result.
func (f *reportFlags) emit(cmd *cobra.Command, res *report.Result) error {
	if f.chart != "" {
		if res.Series == nil {
			return fmt.Errorf("--chart: this report has no chart")
		}
		file, err := os.Create(f.chart)
		if err != nil {
			return fmt.Errorf("--chart: %w", err)
		}
		if err := res.Series.RenderPNG(file, res.Title); err != nil {
			file.Close()
			return err
		}
		if err := file.Close(); err != nil {
			return fmt.Errorf("--chart: %w", err)
		}
	}
	if err := report.Write(cmd.OutOrStdout(), f.output, res, f.chart); err != nil {
		return err
	}
	notesToStderr(cmd, f.output, res)
	if len(res.Rows) == 0 {
		fmt.Fprintln(cmd.ErrOrStderr(), emptyHint(res))
	}
	return nil
}

// emptyHint says why a report has no rows: the history holds nothing it reads in the window
// (title) with these filters.
func emptyHint(res *report.Result) string {
	return "note: no rows: the history holds nothing this report reads for " + res.Title +
		" (with the filters given). Check the window (--since, --until, --period), the filters, and that " +
		"\"arbiter run\" (with a fleet file) or \"arbiter record\" was recording then; \"report streams\" shows what the streams hold"
}

// notesToStderr prints a result's notes on standard error where the format has no place for
// them (JSON, YAML, CSV, Parquet), so a caveat printed under a table is never lost in an export.
func notesToStderr(cmd *cobra.Command, format string, res *report.Result) {
	if format == "" || format == "table" || format == "markdown" || format == "md" {
		return
	}
	for _, n := range res.Notes {
		fmt.Fprintln(cmd.ErrOrStderr(), "note:", n)
	}
}

// defaultBy is each report's grouping when --by is not given, on the command line and in
// "report serve".
var defaultBy = map[string]string{"cost": "workload", "tokens": "workload,location", "savings": "workload",
	"idle": "location,gpu", "reclaims": "", "availability": "workload", "commitments": "", "reconcile": "", "jobs": "", "anomalies": ""}

// reportCmd builds a report command: request, when not nil, adds the report's own flags to the
// request for the options (nil: report use with the common flags only).
func reportCmd(g *cli.Globals, use, short, example string, chart, needFleet bool,
	request func(report.Request) report.Request) (*cobra.Command, *reportFlags) {
	var f reportFlags
	cmd := &cobra.Command{
		Use: use, Short: short, Example: example, Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := f.result(cmd, g, use, needFleet, request)
			if err != nil {
				return err
			}
			return f.emit(cmd, res)
		},
	}
	f.bind(cmd, defaultBy[use], chart)
	return cmd, &f
}

// result runs report use on the flags' options; request, when not nil, adds the report's own
// flags to the request.
func (f *reportFlags) result(cmd *cobra.Command, g *cli.Globals, use string, needFleet bool,
	request func(report.Request) report.Request) (*report.Result, error) {
	o, err := f.options(time.Now().UTC(), needFleet)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Minute)
	defer cancel()
	req := report.NewRequest(use, o)
	if request != nil {
		req = request(req)
	}
	r, closeFn, err := open(ctx, cmd, g)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	return r.Run(ctx, req)
}
