package replay

import (
	"context"
	"fmt"
)

// Schedules replays one registered policy over cfg's windows of tr and returns what it held in
// each window, tick by tick, with the windows' offsets: the spend behind Evaluate's figures, for
// readers that need it step by step (internal/costseries builds cost series from it). Each window
// is built, run and closed exactly as Evaluate does it.
func Schedules(ctx context.Context, tr *Trace, cfg Config, spec PolicySpec) ([]Schedule, []int, error) {
	reg, ok := registry[spec.Name]
	if !ok {
		return nil, nil, fmt.Errorf("unknown policy %q: choose from %v", spec.Name, PolicyNames())
	}
	if err := cfg.Rules.validate(); err != nil {
		return nil, nil, err
	}
	offsets, err := WindowOffsets(tr, cfg)
	if err != nil {
		return nil, nil, err
	}
	caps := tickMajor(tr)
	zones := make([]string, len(tr.Zones))
	for z := range tr.Zones {
		zones[z] = tr.Zones[z].Name
	}
	out := make([]Schedule, 0, len(offsets))
	for w, o := range offsets {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		s, err := windowSchedule(entry{spec, reg}, cfg, zones, caps[o:o+cfg.Rules.Window], caps[:o], windowSeed(cfg.Seed, w))
		if err != nil {
			return nil, nil, fmt.Errorf("policy %s, window %d (offset %d): %w", spec, w, o, err)
		}
		out = append(out, s)
	}
	return out, offsets, nil
}

// windowRules are the run's rules with the policy's own extra replicas, where its spec names them.
func windowRules(e entry, cfg Config) Rules {
	rules := cfg.Rules
	if e.spec.Extra >= 0 {
		rules.Extra = e.spec.Extra
	}
	return rules
}

// windowSchedule builds the policy for one window, runs it and closes it.
func windowSchedule(e entry, cfg Config, zones []string, capacity, past [][]int, seed uint64) (Schedule, error) {
	rules := windowRules(e, cfg)
	env := Env{Zones: zones, Rules: rules, Seed: seed}
	if e.reg.hindsight {
		env.Capacity = capacity
	}
	p, err := e.reg.factory(env)
	if err != nil {
		return Schedule{}, fmt.Errorf("building policy: %w", err)
	}
	sched, err := simulate(p, rules, zones, capacity, past)
	if c, ok := p.(interface{ Close() error }); ok {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	return sched, err
}
