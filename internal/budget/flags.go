package budget

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Flags is a policy as `arbiter budget set` takes it on the command line.
type Flags struct {
	Scope           string
	Period          string
	Limit           float64
	Currency        string
	Alerts          []string // notify on actual spend: "50%", "80%"
	ForecastAlerts  []string // notify on forecast spend
	On              []string // "[actual:|forecast:]AT:ACTION", e.g. "100%:block-scale-up"
	ApproveOver     string   // "25/h"
	Restore         string   // "first" or "ask"
	Approvers       []string
	ApprovalTimeout time.Duration
	Remedies        []string // "fallback"
}

// Policy builds the named policy from the flags, normalized and validated.
func (f Flags) Policy(name string) (Policy, error) {
	p := Policy{Name: name, Period: Period(f.Period), Limit: f.Limit, Currency: f.Currency, Restore: Restore(f.Restore),
		Approvers: f.Approvers, ApprovalTimeout: Duration(f.ApprovalTimeout)}
	var errs []error
	sc, err := ParseScope(f.Scope)
	if err != nil {
		errs = append(errs, fmt.Errorf("--scope: %w", err))
	}
	p.Scope = sc
	for _, set := range []struct {
		flag string
		on   Basis
		list []string
	}{{"--alert", Actual, f.Alerts}, {"--forecast-alert", Forecast, f.ForecastAlerts}} {
		for _, s := range set.list {
			l, err := ParseLevel(s)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", set.flag, err))
				continue
			}
			p.Thresholds = append(p.Thresholds, Threshold{At: l, On: set.on, Action: Notify})
		}
	}
	for _, s := range f.On {
		t, err := ParseOn(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("--on: %w", err))
			continue
		}
		p.Thresholds = append(p.Thresholds, t)
	}
	if f.ApproveOver != "" {
		r, err := ParseRate(f.ApproveOver)
		if err != nil {
			errs = append(errs, fmt.Errorf("--approve-over: %w", err))
		}
		p.ApproveOver = r
	}
	rs, err := ParseRemedies(f.Remedies)
	if err != nil {
		errs = append(errs, fmt.Errorf("--remedy: %w", err))
	}
	p.Remedies = rs
	errs = append(errs, amountsOverLimit(p)...)
	if err := errors.Join(errs...); err != nil {
		return p, err
	}
	p.defaults()
	if err := p.Validate(); err != nil {
		return p, err
	}
	p.sort()
	return p, nil
}

// ParseOn reads a threshold with its action: "100%:block-scale-up" or
// "forecast:90%:require-approval" (the basis defaults to actual).
func ParseOn(s string) (Threshold, error) {
	parts := strings.Split(strings.TrimSpace(s), ":")
	t := Threshold{On: Actual}
	if len(parts) == 3 {
		t.On = Basis(parts[0])
		if t.On != Actual && t.On != Forecast {
			return t, fmt.Errorf("%q: basis %q must be actual or forecast", s, parts[0])
		}
		parts = parts[1:]
	}
	if len(parts) != 2 {
		return t, fmt.Errorf("%q: want [actual:|forecast:]LEVEL:ACTION, e.g. 100%%:block-scale-up", s)
	}
	l, err := ParseLevel(parts[0])
	if err != nil {
		return t, err
	}
	t.At, t.Action = l, Action(parts[1])
	return t, nil
}

// amountsOverLimit refuses a threshold given as an amount above ten times the limit, as a
// percentage over 1000% is refused: "--limit 10 --alert 150" is almost always 150% written
// without its sign, and would never fire.
func amountsOverLimit(p Policy) []error {
	var errs []error
	for _, t := range p.Thresholds {
		if t.At.Percent || p.Limit <= 0 || t.At.Value <= 10*p.Limit {
			continue
		}
		errs = append(errs, fmt.Errorf("threshold %s is an amount, %.0f%% of the limit of %s (over 1000%%, which is refused "+
			"as a percentage too): write %s%% if a percentage of the limit is meant, or raise --limit",
			t.At, 100*t.At.Value/p.Limit, strconv.FormatFloat(p.Limit, 'f', -1, 64), t.At))
	}
	return errs
}
