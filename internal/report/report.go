// Package report turns Bursar's history into the numbers a platform lead and a FinOps analyst ask
// for: spend and cost per GPU-hour, cost per million tokens, savings against on-demand, idle GPUs,
// budget burn, reclaims, commitment floors and a FOCUS export.
//
// Every report is a function over a Querier (the store) and Options. Other processes name a
// report in a Request, which the store's owner runs for them over NATS (Serve, Client), so no SQL
// comes from outside. The time is passed in (Options.Now), never read from the clock, so a report
// over a fixed history always gives the same numbers. Reports read the hourly rollups wherever they hold
// what is needed and go to raw rows only for what the rollups cannot know: the parts of hours at
// the window's edges and the interval still open after each series' latest sample.
package report

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/fleet"
)

// Querier runs read-only SQL on the history: *store.Store is one. Only this process's reports
// send it SQL; others send a Request.
type Querier interface {
	// Query runs a SELECT and returns its rows as JSONEachRow.
	Query(ctx context.Context, query string) ([]byte, error)
	// Table returns the quoted name to read a table by.
	Table(name string) string
}

// Dim is a dimension a report can group and filter by.
type Dim string

// The dimensions. Region and team are not stored with replicas: they come from the fleet file
// (a location's region, a workload's team).
const (
	Workload Dim = "workload"
	Location Dim = "location"
	Provider Dim = "provider"
	Region   Dim = "region"
	Market   Dim = "market"
	GPU      Dim = "gpu"
	Team     Dim = "team"
)

// Dims lists every dimension, in the order columns are printed.
var Dims = []Dim{Workload, Location, Provider, Region, Market, GPU, Team}

// ParseDims reads a comma-separated --by list.
func ParseDims(s string) ([]Dim, error) {
	var out []Dim
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		d := Dim(f)
		if !slices.Contains(Dims, d) {
			return nil, fmt.Errorf("--by %q: unknown dimension %q; want some of workload, location, provider, region, market, gpu, team", s, f)
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out, nil
}

// Filter keeps only rows whose dimension values are listed; a dimension not in the map is not
// filtered.
type Filter map[Dim][]string

// Options are what every report takes.
type Options struct {
	Window Window
	By     []Dim
	Filter Filter
	// Now is the time of the report: the interval still open after a series' latest sample is
	// counted up to the fleet's latest replica.state report before Now (or the window's end,
	// whichever is first), never to Now itself.
	Now time.Time
	// Fleet, when given, maps locations to regions and says where each workload may run.
	Fleet *fleet.Config
	// Basis is BasisEstimated (or empty) or BasisBilled, for cost, tokens and savings.
	Basis string
}

// Result is a report's answer: rows by column name, columns in print order.
type Result struct {
	Title   string
	Columns []string
	Rows    []cli.Row
	// Total, when not nil, is a summary row printed under tables and markdown (not in JSON or CSV,
	// where it would read as data).
	Total cli.Row
	// Notes are caveats printed under tables and markdown.
	Notes []string
	// Series, when not nil, is what a chart of the report plots.
	Series *Series
}

// region returns the region of a location from the fleet file, or "" when unknown.
func (o Options) region(location string) string {
	if o.Fleet == nil {
		return ""
	}
	if l, ok := o.Fleet.Location(location); ok {
		return l.Region
	}
	return ""
}

// team returns a workload's team from the fleet file, or "" when unknown.
func (o Options) team(workload string) string {
	if o.Fleet == nil {
		return ""
	}
	if w, ok := o.Fleet.Workload(workload); ok {
		return w.Team
	}
	return ""
}

// rate is what one replica of gpu serves for workload, by the fleet file's per-model rates; 0
// when there is no fleet file or it states none.
func (o Options) rate(workload, gpu string) float64 {
	if o.Fleet == nil {
		return 0
	}
	if w, ok := o.Fleet.Workload(workload); ok {
		if r, ok := w.RateFor(gpu); ok {
			return r
		}
	}
	return 0
}

// NeedsFleet says why these options need the fleet file, or "" when they do not: a team, like a
// region, is known only from it.
func (o Options) NeedsFleet() string {
	for _, d := range []Dim{Team, Region} {
		if slices.Contains(o.By, d) || len(o.Filter[d]) > 0 {
			return fmt.Sprintf("%s comes from the fleet file (a workload's team, a location's region): give --fleet", d)
		}
	}
	return ""
}

// byColumns returns the --by dimensions as column names.
func byColumns(by []Dim) []string {
	out := make([]string, len(by))
	for i, d := range by {
		out[i] = string(d)
	}
	return out
}

// round rounds to n decimal places, so printed numbers don't carry float noise.
func round(v float64, n int) float64 {
	p := 1.0
	for range n {
		p *= 10
	}
	if v < 0 {
		return -float64(int64(-v*p+0.5)) / p
	}
	return float64(int64(v*p+0.5)) / p
}

// ratio is a/b, or 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func sortStrings(s []string) { slices.Sort(s) }
