package serving

import (
	"context"
	"fmt"
)

// Config is one comparison: the windows every policy is replayed on and the cold start.
type Config struct {
	// Length is one window in ticks (1,440: 24 h of minutes).
	Length    int
	Windows   int
	Seed      uint64
	ColdStart int
}

// DefaultConfig is SERVING.md's benchmark: 10 windows of 24 h, seed 0, a 5-minute cold start.
func DefaultConfig() Config { return Config{Length: 1440, Windows: 10, Seed: 0, ColdStart: 5} }

// Reference is the policy every cost is compared with (cost_pct_of_od_autoscale).
const Reference = "od-autoscale"

// Result is one policy's figures on one demand trace: the mean over windows, then each window.
type Result struct {
	Policy  string `json:"policy"`
	Demand  string `json:"demand"`
	Profile string `json:"profile"`
	Offsets []int  `json:"offsets"`
	Score
	PerWindow []Score `json:"per_window"`
}

// Evaluate replays every named policy on the same windows of in and returns one Result each, in
// the order given. od-autoscale is replayed on every window too (unless listed, silently) as the
// reference of cost_pct_of_od_autoscale.
func Evaluate(ctx context.Context, in *Inputs, cfg Config, names []string) ([]Result, error) {
	offsets, err := Offsets(in, cfg)
	if err != nil {
		return nil, err
	}
	results := make([]Result, len(names))
	for i, n := range names {
		results[i] = Result{Policy: n, Demand: in.Demand.Name, Profile: in.Profile.Describe(), Offsets: offsets}
	}
	for wi, o := range offsets {
		w := in.Window(o, cfg.Length, cfg.ColdStart)
		ref, err := replayOne(ctx, Reference, w, windowSeed(cfg.Seed, wi))
		if err != nil {
			return nil, fmt.Errorf("window %d (offset %d): %w", wi, o, err)
		}
		for i, n := range names {
			sc := ref
			if n != Reference {
				if sc, err = replayOne(ctx, n, w, windowSeed(cfg.Seed, wi)); err != nil {
					return nil, fmt.Errorf("policy %s, window %d (offset %d): %w", n, wi, o, err)
				}
			}
			sc.CostPctOfODAutoscale = pct(sc.CostUSD, ref.CostUSD)
			results[i].PerWindow = append(results[i].PerWindow, sc)
		}
	}
	for i := range results {
		results[i].Score = meanScore(results[i].PerWindow)
	}
	return results, nil
}

// replayOne builds the named policy for w, runs and scores it.
func replayOne(ctx context.Context, name string, w *Window, seed uint64) (Score, error) {
	if err := ctx.Err(); err != nil {
		return Score{}, err
	}
	reg, ok := registry[name]
	if !ok {
		return Score{}, fmt.Errorf("unknown policy %q", name)
	}
	env := Env{Sources: w.Sources, ColdStart: w.ColdStart, Seed: seed, PastDemand: w.Past}
	if reg.hindsight {
		env.Window = w
	}
	p, err := reg.factory(env)
	if err != nil {
		return Score{}, fmt.Errorf("building policy %s: %w", name, err)
	}
	s, err := Simulate(p, w)
	if c, ok := p.(interface{ Close() error }); ok {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return Score{}, err
	}
	sc := Measure(w, s)
	if f, ok := p.(Forecasting); ok {
		sc.ForecastMAPEPct = f.MAPE()
	}
	if b, ok := p.(Bounded); ok {
		sc.OptimalityGapPct = gapPct(b)
		_, sc.ProvenOptimal = b.Bound()
	}
	return sc, nil
}

// windowSeed gives each window its own stream, fixed by the run's seed (as internal/replay).
func windowSeed(seed uint64, w int) uint64 {
	return seed*0x9e3779b97f4a7c15 + uint64(w) + 1
}

// meanScore is the mean of every figure over the windows.
func meanScore(ws []Score) Score {
	m := Score{GPUHoursByType: map[string]float64{}, ProvenOptimal: len(ws) > 0}
	n := float64(len(ws))
	for _, s := range ws {
		m.CostUSD += s.CostUSD / n
		m.ServedMillionTokens += s.ServedMillionTokens / n
		m.CostUSDPerMillionTokens += s.CostUSDPerMillionTokens / n
		m.CapacityAvailabilityPct += s.CapacityAvailabilityPct / n
		m.UnservedTokensPct += s.UnservedTokensPct / n
		m.SpotSharePct += s.SpotSharePct / n
		m.MovesPerHour += s.MovesPerHour / n
		m.ForecastMAPEPct += s.ForecastMAPEPct / n
		m.CostPctOfODAutoscale += s.CostPctOfODAutoscale / n
		m.OptimalityGapPct += s.OptimalityGapPct / n
		m.ProvenOptimal = m.ProvenOptimal && s.ProvenOptimal
		for typ, h := range s.GPUHoursByType {
			m.GPUHoursByType[typ] += h / n
		}
	}
	return m
}
