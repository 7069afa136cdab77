// Package budget is Bursar's budget policies: what a policy says (scope, period, limit,
// thresholds and what each threshold does), how it is validated, where it is kept (a NATS KV
// bucket whose history is the audit trail), and how the arbiter enforces it.
//
// Evaluation is pure: spend is computed from the replica intervals it is given and the time is
// passed in, so the same inputs always give the same alerts and verdicts. Only Store does I/O.
package budget

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Period is the window a limit applies to. Periods are calendar periods in UTC: a day starts at
// midnight, a week on Monday, a month on its first day.
type Period string

// The periods a policy can have.
const (
	Day   Period = "day"
	Week  Period = "week"
	Month Period = "month"
)

// Basis says which spend a threshold watches: what was spent so far, or what will have been spent
// by the end of the period (the forecast of internal/forecast; the current burn rate while the
// history is short).
type Basis string

// The bases of a threshold.
const (
	Actual   Basis = "actual"
	Forecast Basis = "forecast"
)

// Action is what a threshold does while spend is at or above it.
type Action string

// The actions a threshold can take.
const (
	// Notify publishes a budget.alert (and Slack posts it); nothing else changes.
	Notify Action = "notify"
	// RequireApproval makes plans in scope that raise spend per hour by more than the policy's
	// ApproveOver wait for one of its approvers.
	RequireApproval Action = "require-approval"
	// BlockScaleUp refuses actions in scope that add capacity; replacements of lost or moved
	// capacity still go through.
	BlockScaleUp Action = "block-scale-up"
	// ScaleToFloor caps the scope at nothing, so the planner scales it down to the workloads'
	// minimums; going below a minimum still needs an approval.
	ScaleToFloor Action = "scale-to-floor"
)

var actions = []Action{Notify, RequireApproval, BlockScaleUp, ScaleToFloor}

// Restore says what approve_over does to a launch that replaces capacity a workload lost (a
// reclaim, a failed launch, an instance gone), up to what it had before the loss.
type Restore string

// The ways a policy can treat a restore.
const (
	// RestoreFirst applies it at once and tells the approvers after, with the spend per hour it
	// added and a way back to the cheapest placement that keeps the workload's minimum. The default:
	// "ask before spend rises" does not mean "leave the service down while nobody answers".
	RestoreFirst Restore = "first"
	// RestoreAsk holds it for an approval like any other rise.
	RestoreAsk Restore = "ask"
)

// Level is a threshold's height: a percentage of the limit ("80%") or an absolute amount
// ("40000") in the policy's currency.
type Level struct {
	Value   float64
	Percent bool
}

// ParseLevel reads "80%", "12.5%" or "40000".
func ParseLevel(s string) (Level, error) {
	s = strings.TrimSpace(s)
	num, pct := strings.CutSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return Level{}, fmt.Errorf("%q is not a threshold: want a percentage like 80%% or an amount like 40000", s)
	}
	return Level{Value: v, Percent: pct}, nil
}

// Amount is the spend at which the level is reached under limit.
func (l Level) Amount(limit float64) float64 {
	if l.Percent {
		return limit * l.Value / 100
	}
	return l.Value
}

func (l Level) String() string {
	s := strconv.FormatFloat(l.Value, 'f', -1, 64)
	if l.Percent {
		return s + "%"
	}
	return s
}

// MarshalText writes the level as it is configured.
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText reads a level with ParseLevel.
func (l *Level) UnmarshalText(b []byte) error {
	v, err := ParseLevel(string(b))
	*l = v
	return err
}

// Threshold is one line a policy watches, and what happens while spend is at or above it.
type Threshold struct {
	At     Level  `json:"at" yaml:"at"`
	On     Basis  `json:"on" yaml:"on"`
	Action Action `json:"action" yaml:"action"`
}

// Key names the threshold's line: the basis and the level. Thresholds that share a line fire
// one alert.
func (t Threshold) Key() string { return string(t.On) + ":" + t.At.String() }

// Rate is an amount per hour in the policy's currency, written "25/h".
type Rate float64

// ParseRate reads "25/h", "25" or "25.5/h".
func ParseRate(s string) (Rate, error) {
	num, _ := strings.CutSuffix(strings.TrimSpace(s), "/h")
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a rate: want an amount per hour like 25/h", s)
	}
	return Rate(v), nil
}

func (r Rate) String() string { return strconv.FormatFloat(float64(r), 'f', -1, 64) + "/h" }

// MarshalText writes the rate as "25/h".
func (r Rate) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText reads a rate with ParseRate.
func (r *Rate) UnmarshalText(b []byte) error {
	v, err := ParseRate(string(b))
	*r = v
	return err
}

// Duration is a time.Duration written as "30m".
type Duration time.Duration

// MarshalText writes the duration as Go does ("30m0s").
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads "30m", "1h30m" or "2h".
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(strings.TrimSpace(string(b)))
	if err != nil {
		return fmt.Errorf("%q is not a duration: want something like 30m or 2h", string(b))
	}
	*d = Duration(v)
	return nil
}

// Policy is one budget: a limit on the spend of a scope over a period, the thresholds that
// watch it, and who may approve what it holds back.
type Policy struct {
	Name       string      `json:"name" yaml:"name"`
	Scope      Scope       `json:"scope" yaml:"scope"`
	Period     Period      `json:"period" yaml:"period"`
	Limit      float64     `json:"limit" yaml:"limit"`
	Currency   string      `json:"currency" yaml:"currency"`
	Thresholds []Threshold `json:"thresholds" yaml:"thresholds"`
	// ApproveOver is how much a plan may raise spend per hour before it needs an approval, while
	// a require-approval threshold is reached (or always, when no threshold requires approval).
	// Zero means the rule is off unless a threshold requires approval, then any rise counts.
	ApproveOver Rate `json:"approve_over,omitempty" yaml:"approve_over,omitempty"`
	// Restore says whether approve_over holds a replacement of lost capacity (ask) or lets it
	// through and tells the approvers after (first, the default; empty reads as first).
	Restore         Restore  `json:"restore,omitempty" yaml:"restore,omitempty"`
	Approvers       []string `json:"approvers,omitempty" yaml:"approvers,omitempty"`
	ApprovalTimeout Duration `json:"approval_timeout,omitempty" yaml:"approval_timeout,omitempty"`
	// Remedies are the fixes to propose to the approvers when an anomaly in scope has a cause one
	// of them fixes (remedy.go); empty: anomalies are only reported.
	Remedies []Remedy `json:"remedies,omitempty" yaml:"remedies,omitempty"`
}

// RestoresFirst reports whether the policy lets a replacement of lost capacity through at once.
func (p Policy) RestoresFirst() bool { return p.Restore != RestoreAsk }

// DefaultApprovalTimeout applies when a policy sets none.
const DefaultApprovalTimeout = 30 * time.Minute

// Timeout is how long an approval request waits before it counts as rejected.
func (p Policy) Timeout() time.Duration {
	if p.ApprovalTimeout <= 0 {
		return DefaultApprovalTimeout
	}
	return time.Duration(p.ApprovalTimeout)
}

// Currency is the one currency a policy's limit can be in: every price Bursar sees is normalized to
// USD, and spend is compared with the limit as it is.
const Currency = "USD"

// Normalize fills in defaults (basis actual, action notify, currency upper case, USD when none, restore first) and orders the
// thresholds, so that equal policies compare and print equal.
func (p *Policy) Normalize() {
	p.defaults()
	p.sort()
}

// defaults fills in what a policy may leave out, keeping the order thresholds were written in
// (so that errors name them by the position the user sees).
func (p *Policy) defaults() {
	p.Thresholds = slices.Clone(p.Thresholds)
	p.Currency = cmp.Or(strings.ToUpper(strings.TrimSpace(p.Currency)), Currency)
	for i := range p.Thresholds {
		if p.Thresholds[i].On == "" {
			p.Thresholds[i].On = Actual
		}
		if p.Thresholds[i].Action == "" {
			p.Thresholds[i].Action = Notify
		}
	}
	if p.ApprovalTimeout == 0 {
		p.ApprovalTimeout = Duration(DefaultApprovalTimeout)
	}
	if p.Restore == "" {
		p.Restore = RestoreFirst
	}
}

// sort orders a copy of the thresholds: a Policy passed by value must not reorder its caller's.
func (p *Policy) sort() {
	p.Thresholds = slices.Clone(p.Thresholds)
	slices.SortStableFunc(p.Thresholds, func(a, b Threshold) int {
		if c := strings.Compare(string(a.On), string(b.On)); c != 0 {
			return c
		}
		if c := cmpFloat(a.At.Amount(p.Limit), b.At.Amount(p.Limit)); c != 0 {
			return c
		}
		return slices.Index(actions, a.Action) - slices.Index(actions, b.Action)
	})
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Has reports whether any threshold of the policy takes action a.
func (p Policy) Has(a Action) bool {
	return slices.ContainsFunc(p.Thresholds, func(t Threshold) bool { return t.Action == a })
}

var (
	nameRE     = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)
	approverRE = regexp.MustCompile(`^[UWS][A-Z0-9]{2,20}$`)
)

// Problem is one thing wrong with a policy, by field.
type Problem struct {
	Field  string
	Reason string
}

// InvalidError lists everything wrong with a policy, so a user fixes it in one go.
type InvalidError struct {
	Policy   string
	Problems []Problem
}

func (e *InvalidError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.Field + ": " + p.Reason
	}
	return fmt.Sprintf("budget policy %q is invalid: %s", e.Policy, strings.Join(parts, "; "))
}

// Validate checks the policy and returns an *InvalidError naming every bad field, or nil.
func (p Policy) Validate() error {
	var ps []Problem
	bad := func(field, format string, args ...any) {
		ps = append(ps, Problem{Field: field, Reason: fmt.Sprintf(format, args...)})
	}
	if !nameRE.MatchString(p.Name) {
		bad("name", "%q must be 1-63 lower-case letters, digits, '-' or '_', starting with a letter or digit", p.Name)
	}
	if p.Scope.IsZero() {
		bad("scope", "is required: workload=NAME, team=NAME, provider=NAME, location=NAME (comma-separated to combine) or all")
	}
	if !slices.Contains([]Period{Day, Week, Month}, p.Period) {
		bad("period", "%q must be day, week or month", p.Period)
	}
	if !(p.Limit > 0) || math.IsInf(p.Limit, 0) {
		bad("limit", "must be a positive amount, got %v", p.Limit)
	}
	if p.Currency != Currency {
		bad("currency", "%q: Bursar's prices and spend are in USD and it converts no currency, so a limit must be in USD too (--currency USD, or currency: USD)", p.Currency)
	}
	if len(p.Thresholds) == 0 {
		bad("thresholds", "none given: a policy needs at least one (--alert 80%% or --on 100%%:block-scale-up)")
	}
	seen := map[Threshold]bool{}
	for i, t := range p.Thresholds {
		p.validateThreshold(fmt.Sprintf("thresholds[%d]", i), t, seen, bad)
	}
	if p.ApproveOver < 0 || math.IsNaN(float64(p.ApproveOver)) {
		bad("approve_over", "must be zero or more per hour, got %v", float64(p.ApproveOver))
	}
	if p.Restore != "" && p.Restore != RestoreFirst && p.Restore != RestoreAsk {
		bad("restore", "%q must be first (a replacement of lost capacity is applied at once and the approvers are told after) "+
			"or ask (it waits for an approval like any rise)", p.Restore)
	}
	if (p.Has(RequireApproval) || p.ApproveOver > 0) && len(p.Approvers) == 0 {
		bad("approvers", "required when plans can need approval (require-approval or approve_over): list Slack user (U…) or group (S…) ids")
	}
	for i, a := range p.Approvers {
		if !approverRE.MatchString(a) {
			bad(fmt.Sprintf("approvers[%d]", i), "%q is not a Slack user (U…, W…) or user group (S…) id", a)
		}
	}
	p.validateRemedies(bad)
	if t := time.Duration(p.ApprovalTimeout); t != 0 && (t < time.Minute || t > 7*24*time.Hour) {
		bad("approval_timeout", "%v must be between 1m and 168h", t)
	}
	if len(ps) > 0 {
		return &InvalidError{Policy: p.Name, Problems: ps}
	}
	return nil
}

func (p Policy) validateThreshold(field string, t Threshold, seen map[Threshold]bool, bad func(string, string, ...any)) {
	switch {
	case !(t.At.Value > 0):
		bad(field+".at", "%s must be above zero", t.At)
	case t.At.Percent && t.At.Value > 1000:
		bad(field+".at", "%s is over 1000%%; write an absolute amount if that is meant", t.At)
	}
	if t.On != "" && t.On != Actual && t.On != Forecast {
		bad(field+".on", "%q must be actual or forecast", t.On)
	}
	if t.Action != "" && !slices.Contains(actions, t.Action) {
		bad(field+".action", "%q must be notify, require-approval, block-scale-up or scale-to-floor", t.Action)
	}
	n := t
	if n.On == "" {
		n.On = Actual
	}
	if n.Action == "" {
		n.Action = Notify
	}
	if seen[n] {
		bad(field, "repeats %s %s %s", n.On, n.At, n.Action)
	}
	seen[n] = true
}
