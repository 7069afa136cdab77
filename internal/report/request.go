package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/budget"
	"github.com/bursar-dev/bursar/internal/fleet"
)

// Request is everything a caller may ask the store's owner: a named report and its typed
// parameters. It holds no SQL: the owner builds the queries, so what reaches its engine is only
// what Bursar's reports run.
type Request struct {
	// Info asks who the owner is; the other fields are then unused.
	Info   bool      `json:"info,omitempty"`
	Report string    `json:"report,omitempty"` // one of Reports
	Since  time.Time `json:"since"`
	Until  time.Time `json:"until"`
	Now    time.Time `json:"now"`
	By     []Dim     `json:"by,omitempty"`
	Filter Filter    `json:"filter,omitempty"`
	// Fleet is the caller's fleet file, as parsed there.
	Fleet *fleet.Config `json:"fleet,omitempty"`
	// Target is availability's --target.
	Target string `json:"target,omitempty"`
	// Percentile and Discount are commitments' flags.
	Percentile float64 `json:"percentile,omitempty"`
	Discount   float64 `json:"discount,omitempty"`
	// Threshold and MaxGap are idle's flags.
	Threshold float64       `json:"threshold,omitempty"`
	MaxGap    time.Duration `json:"max_gap,omitempty"`
	// OutputWeight is tokens' --output-weight.
	OutputWeight float64 `json:"output_weight,omitempty"`
	// Policies are the budget report's policies.
	Policies []budget.Policy `json:"policies,omitempty"`
	// Basis is --basis of cost, tokens and savings: estimated (empty) or billed.
	Basis string `json:"basis,omitempty"`
	// Jobs and Teams are jobs' --job and --team: the jobs to keep (all when empty).
	Jobs  []string `json:"jobs,omitempty"`
	Teams []string `json:"teams,omitempty"`
	// Plan keeps one plan (its plan id) in decisions and holds.
	Plan string `json:"plan,omitempty"`
}

// Reports are the reports a Request can name: Named (those a schedule runs) plus budget,
// forecast, focus and reconcile, and the console's views of what the arbiter did (History).
var Reports = append(append(slices.Clone(Named), "budget", "forecast", "focus", "reconcile"), History...)

// History are the reports of the arbiter's decisions and the fleet they left: one row per plan,
// per hold, per group of replicas. They take filters but no grouping (by).
var History = []string{"decisions", "holds", "fleet"}

// Limits on a request, so one caller cannot make the owner decode or run without bound.
const (
	maxRequestBytes = 1 << 20
	maxFilterValues = 1000
	maxWindow       = 3 * 366 * 24 * time.Hour
)

// errSQL is the answer to a request that carries SQL.
var errSQL = errors.New(`field "sql": SQL is not accepted over the bus; name a report ("report": "cost") ` +
	"with typed parameters (since, until, by, filter...), or query a ClickHouse server with a read-only user of its own")

// NewRequest is the request for report name over o.
func NewRequest(name string, o Options) Request {
	return Request{Report: name, Since: o.Window.Since, Until: o.Window.Until, Now: o.Now, By: o.By, Filter: o.Filter, Fleet: o.Fleet, Basis: o.Basis}
}

// Options are the request's common options.
func (r Request) Options() Options {
	return Options{Window: Window{Since: r.Since, Until: r.Until}, By: r.By, Filter: r.Filter, Now: r.Now, Fleet: r.Fleet, Basis: r.Basis}
}

// DecodeRequest reads and validates a request from the wire. Unknown fields are refused, and a
// "sql" field (in any case) is refused with an error saying what to send instead.
func DecodeRequest(data []byte) (Request, error) {
	if len(data) > maxRequestBytes {
		return Request{}, fmt.Errorf("request of %d bytes: at most %d", len(data), maxRequestBytes)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return Request{}, fmt.Errorf("decoding the request: %w", err)
	}
	for k := range fields {
		if strings.EqualFold(k, "sql") {
			return Request{}, errSQL
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r Request
	if err := dec.Decode(&r); err != nil {
		return Request{}, fmt.Errorf("decoding the request: %w", err)
	}
	if err := r.Validate(); err != nil {
		return Request{}, err
	}
	return r, nil
}

// Validate checks every parameter the way the command line does, and the limits on a request.
func (r Request) Validate() error {
	if r.Info {
		return nil
	}
	if !slices.Contains(Reports, r.Report) {
		return fmt.Errorf("report %q: want one of %s", r.Report, strings.Join(Reports, ", "))
	}
	if r.Now.IsZero() {
		return errors.New("now: required, the time the report is for")
	}
	if r.Report == "budget" { // each policy's own period, up to now
		return r.checkNumbers()
	}
	if r.Since.IsZero() || !r.Until.After(r.Since) {
		return fmt.Errorf("window %s to %s: since and until are required and until must be after since",
			r.Since.Format(time.RFC3339), r.Until.Format(time.RFC3339))
	}
	if r.Until.Sub(r.Since) > maxWindow {
		return fmt.Errorf("window %s to %s: at most %s", r.Since.Format(time.RFC3339), r.Until.Format(time.RFC3339), maxWindow)
	}
	if err := checkDims(r.By, r.Filter); err != nil {
		return err
	}
	if err := checkNames(map[string][]string{"jobs": r.Jobs, "teams": r.Teams}); err != nil {
		return err
	}
	if err := r.checkHistory(); err != nil {
		return err
	}
	return r.checkNumbers()
}

// checkNames checks lists of names by parameter: no empty name, and not too many.
func checkNames(lists map[string][]string) error {
	for param, names := range lists {
		if len(names) > maxFilterValues {
			return fmt.Errorf("%s: %d values, at most %d", param, len(names), maxFilterValues)
		}
		if slices.Contains(names, "") {
			return fmt.Errorf("%s: an empty name; give each name once, e.g. --job finetune-7b", param)
		}
	}
	return nil
}

// checkDims checks group-by and filter dimensions and the filter's values.
func checkDims(by []Dim, f Filter) error {
	for _, d := range by {
		if !slices.Contains(Dims, d) {
			return fmt.Errorf("by: unknown dimension %q; want some of workload, location, provider, region, market, gpu", d)
		}
	}
	n := 0
	for d, vals := range f {
		if !slices.Contains(Dims, d) {
			return fmt.Errorf("filter: unknown dimension %q; want some of workload, location, provider, region, market, gpu", d)
		}
		if len(vals) == 0 {
			return fmt.Errorf("filter %s: no values", d)
		}
		n += len(vals)
	}
	if n > maxFilterValues {
		return fmt.Errorf("filter: %d values, at most %d", n, maxFilterValues)
	}
	return nil
}

// checkHistory checks the parameters of History's reports: they group by nothing, and only
// decisions and holds keep one plan.
func (r Request) checkHistory() error {
	if slices.Contains(History, r.Report) && len(r.By) > 0 {
		return fmt.Errorf("by: %s has one row per %s and groups by nothing; filter instead (filter: {\"workload\": [...]})",
			r.Report, map[string]string{"decisions": "plan", "holds": "hold", "fleet": "workload, location, GPU type and market"}[r.Report])
	}
	if (r.Report == "decisions" || r.Report == "holds") && (len(r.Filter[GPU]) > 0 || len(r.Filter[Team]) > 0 && r.Fleet == nil) {
		return fmt.Errorf("filter: %s filters by workload, location, market, provider and region; a plan's actions name no GPU type (and a team needs the fleet)", r.Report)
	}
	if r.Plan == "" {
		return nil
	}
	if r.Report != "decisions" && r.Report != "holds" {
		return fmt.Errorf("plan: only decisions and holds keep one plan, not %s", r.Report)
	}
	if len(r.Plan) > 64 || strings.ContainsFunc(r.Plan, func(c rune) bool {
		return !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || 'A' <= c && c <= 'Z')
	}) {
		return fmt.Errorf("plan %.80q: want a plan id as plan.decided carries it (letters, digits, - and _, at most 64)", r.Plan)
	}
	return nil
}

// checkNumbers checks the reports' own numeric flags.
func (r Request) checkNumbers() error {
	for _, n := range []struct {
		name  string
		v, hi float64
	}{
		{"percentile", r.Percentile, 100},
		{"discount", r.Discount, 1},
		{"threshold", r.Threshold, 100},
		{"output_weight", r.OutputWeight, 1e6},
	} {
		if math.IsNaN(n.v) || n.v < 0 || n.v > n.hi {
			return fmt.Errorf("%s %v: want 0 to %v", n.name, n.v, n.hi)
		}
	}
	if _, err := ParseBasis(r.Basis); err != nil {
		return fmt.Errorf("basis %q: want estimated or billed", r.Basis)
	}
	if r.MaxGap < 0 {
		return fmt.Errorf("max_gap %s: must not be negative", r.MaxGap)
	}
	for _, p := range r.Policies {
		if err := p.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// Run runs the request's report on q. The owner of the store runs what callers ask through it, and
// a report reading the store itself does the same, so both give the same answer.
func Run(ctx context.Context, q Querier, r Request) (*Result, error) {
	o := r.Options()
	switch r.Report {
	case "tokens":
		return Tokens(ctx, q, TokenOptions{Options: o, OutputWeight: r.OutputWeight})
	case "idle":
		return Idle(ctx, q, IdleOptions{Options: o, Threshold: r.Threshold, MaxGap: r.MaxGap})
	case "availability":
		return Availability(ctx, q, AvailabilityOptions{Options: o, Target: r.Target})
	case "commitments":
		return Commitments(ctx, q, CommitOptions{Options: o, Percentile: r.Percentile, Discount: r.Discount})
	case "budget":
		return Budget(ctx, q, r.Policies, o)
	case "forecast":
		return Forecast(ctx, q, r.Policies, o)
	case "focus":
		return FOCUS(ctx, q, o)
	case "reconcile":
		return Reconcile(ctx, q, o)
	case "jobs":
		return Jobs(ctx, q, JobOptions{Options: o, Jobs: r.Jobs, Teams: r.Teams})
	case "decisions":
		return Decisions(ctx, q, o, r.Plan)
	case "holds":
		return Holds(ctx, q, o, r.Plan)
	case "fleet":
		return Fleet(ctx, q, o)
	}
	return RunNamed(ctx, q, r.Report, o)
}

// Reporter runs requests: on a store in this process (Local), or at the store's owner (*Client).
type Reporter interface {
	Run(ctx context.Context, r Request) (*Result, error)
}

// Local runs requests on a store this process opened.
type Local struct{ Q Querier }

// Run runs r on the store.
func (l Local) Run(ctx context.Context, r Request) (*Result, error) { return Run(ctx, l.Q, r) }
