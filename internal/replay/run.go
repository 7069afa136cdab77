package replay

import (
	"context"
	"fmt"

	"github.com/bursar-dev/bursar/internal/windows"
)

// Config is one comparison: the rules and the windows every policy is replayed on.
type Config struct {
	Rules Rules
	// Offsets are the windows' first ticks in the trace. Empty: draw Windows of them from Seed.
	Offsets []int
	Windows int
	// Seed fixes the drawn windows and every policy's own randomness.
	Seed uint64
}

// Result is one policy's figures over all windows, in the JSON shape of `arbiter replay`.
type Result struct {
	Policy                   string    `json:"policy"`
	Trace                    string    `json:"trace"`
	Windows                  int       `json:"windows"`
	AvailabilityPct          float64   `json:"availability_pct"`
	CostPct                  float64   `json:"cost_pct_of_on_demand"`
	AvailabilityPctPerWindow []float64 `json:"availability_pct_per_window"`
	CostPctPerWindow         []float64 `json:"cost_pct_per_window"`
	Offsets                  []int     `json:"offsets"`
}

// WindowOffsets returns the windows' first ticks: cfg.Offsets checked against the trace, or
// cfg.Windows offsets drawn uniformly from [0, L-T) with cfg.Seed as the SkyServe artifact draws
// them (NumPy's legacy generator), so seed 0 gives the peer's windows.
func WindowOffsets(tr *Trace, cfg Config) ([]int, error) {
	span := tr.Len - cfg.Rules.Window
	if span < 1 {
		return nil, fmt.Errorf("trace %s has %d ticks, not more than one window of %d: use a shorter --window",
			tr.Name, tr.Len, cfg.Rules.Window)
	}
	if len(cfg.Offsets) > 0 {
		for _, o := range cfg.Offsets {
			if o < 0 || o >= span {
				return nil, fmt.Errorf("window offset %d is outside trace %s: offsets must be in [0, %d) ticks", o, tr.Name, span)
			}
		}
		return cfg.Offsets, nil
	}
	return windows.Draw(cfg.Seed, cfg.Windows, span)
}

// Evaluate replays every policy over the same windows of tr and returns one Result per policy,
// in the order given.
func Evaluate(ctx context.Context, tr *Trace, cfg Config, specs []PolicySpec) ([]Result, error) {
	entries := make([]entry, 0, len(specs))
	for _, spec := range specs {
		reg, ok := registry[spec.Name]
		if !ok {
			return nil, fmt.Errorf("unknown policy %q", spec.Name)
		}
		entries = append(entries, entry{spec, reg})
	}
	return evaluate(ctx, tr, cfg, entries)
}

// EvaluateWith replays one policy that is not registered (the soak's service on its own
// harness), under name, as Evaluate replays a registered one.
func EvaluateWith(ctx context.Context, tr *Trace, cfg Config, name string, f Factory, hindsight bool) (Result, error) {
	res, err := evaluate(ctx, tr, cfg, []entry{{PolicySpec{Name: name, Extra: -1}, registration{f, hindsight}}})
	if err != nil {
		return Result{}, err
	}
	return res[0], nil
}

// entry is a policy to replay: how the user named it and how it is built.
type entry struct {
	spec PolicySpec
	reg  registration
}

func evaluate(ctx context.Context, tr *Trace, cfg Config, entries []entry) ([]Result, error) {
	if err := cfg.Rules.validate(); err != nil {
		return nil, err
	}
	offsets, err := WindowOffsets(tr, cfg)
	if err != nil {
		return nil, err
	}
	caps := tickMajor(tr)
	zones := make([]string, len(tr.Zones))
	for z := range tr.Zones {
		zones[z] = tr.Zones[z].Name
	}
	results := make([]Result, 0, len(entries))
	for _, e := range entries {
		res := Result{Policy: e.spec.String(), Trace: tr.Name, Windows: len(offsets), Offsets: offsets}
		for w, o := range offsets {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			sc, err := replayWindow(e, cfg, zones, caps[o:o+cfg.Rules.Window], caps[:o], windowSeed(cfg.Seed, w))
			if err != nil {
				return nil, fmt.Errorf("policy %s, window %d (offset %d): %w", e.spec, w, o, err)
			}
			res.AvailabilityPctPerWindow = append(res.AvailabilityPctPerWindow, sc.AvailabilityPct)
			res.CostPctPerWindow = append(res.CostPctPerWindow, sc.CostPct)
		}
		res.AvailabilityPct = mean(res.AvailabilityPctPerWindow)
		res.CostPct = mean(res.CostPctPerWindow)
		results = append(results, res)
	}
	return results, nil
}

// replayWindow builds the policy for one window, runs it and scores it.
func replayWindow(e entry, cfg Config, zones []string, capacity, past [][]int, seed uint64) (Score, error) {
	sched, err := windowSchedule(e, cfg, zones, capacity, past, seed)
	if err != nil {
		return Score{}, err
	}
	return score(sched, windowRules(e, cfg)), nil
}

// windowSeed gives each window its own stream, fixed by the run's seed.
func windowSeed(seed uint64, w int) uint64 {
	return seed*0x9e3779b97f4a7c15 + uint64(w) + 1
}

// tickMajor lays the trace out as caps[t][z], cut to the trace's length.
func tickMajor(tr *Trace) [][]int {
	caps := make([][]int, tr.Len)
	for t := range caps {
		caps[t] = make([]int, len(tr.Zones))
		for z := range tr.Zones {
			caps[t][z] = tr.Zones[z].Capacity[t]
		}
	}
	return caps
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
