package jobreplay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
)

// Job is what the replay is asked to run: JOBS.md's C0, D and d, in seconds, and the prices.
type Job struct {
	Work, Deadline, Overhead int64
	SpotPrice, ODPrice       float64
}

// RefJob is JOBS.md's job with deadline and overhead in seconds, at the reference prices.
func RefJob(deadline, overhead int64) Job {
	return Job{Work: 48 * 3600, Deadline: deadline, Overhead: overhead, SpotPrice: RefSpotPrice, ODPrice: RefODPrice}
}

// setting puts the job on a market's tick.
func (j Job) setting(tick int64) Setting {
	return Setting{Tick: tick, Work: j.Work, Deadline: j.Deadline, Overhead: j.Overhead, SpotPrice: j.SpotPrice, ODPrice: j.ODPrice}
}

// Window is one run: a market and the tick the job starts at.
type Window struct {
	Market *Market
	Start  int
}

// Windows lays count windows over each market (JOBS.md: per file, short files skipped).
func Windows(ms []Market, count int) []Window {
	var out []Window
	for i := range ms {
		for _, s := range WindowStarts(ms[i].Len(), ms[i].Tick, count) {
			out = append(out, Window{&ms[i], s})
		}
	}
	return out
}

// Run replays the job in one window under the named policy.
func Run(name string, job Job, w Window) (Outcome, error) {
	m := w.Market
	set := job.setting(m.Tick)
	end := w.Start + WindowLen(m.Tick)
	if w.Start < 0 || end > m.Len() {
		return Outcome{}, fmt.Errorf("window from tick %d needs %d ticks but %s has %d", w.Start, WindowLen(m.Tick), m.Name, m.Len())
	}
	avail := m.Avail[w.Start:end]
	p, err := build(name, Env{Setting: set, Zones: m.Zones, Avail: avail})
	if err != nil {
		return Outcome{}, err
	}
	out, err := Simulate(set, avail, p)
	if c, ok := p.(io.Closer); ok { // a policy holding resources (bursar: a NATS server and an arbiter)
		err = errors.Join(err, c.Close())
	}
	if err != nil {
		return out, fmt.Errorf("policy %s on %s from tick %d: %w", name, m.Name, w.Start, err)
	}
	return out, nil
}

// Result is one policy's figures over the windows, in the JSON shape of `arbiter replay --jobs`.
type Result struct {
	Policy          string  `json:"policy"`
	Windows         int     `json:"windows"`
	MeanCost        float64 `json:"mean_cost"`
	CostPct         float64 `json:"cost_pct_of_on_demand"`
	DeadlinesMetPct float64 `json:"deadlines_met_pct"`
	// BestZone, for a run over several zones, is the single zone where this policy cost least
	// over the same windows, and BestZoneCost that mean; SavingPct is what the zones together
	// save over it, in percent of it.
	BestZone     string  `json:"best_single_zone,omitempty"`
	BestZoneCost float64 `json:"best_single_zone_mean_cost,omitempty"`
	SavingPct    float64 `json:"saving_pct_vs_best_single_zone,omitempty"`
}

// Evaluate replays every named policy over the same windows, one Result each in the order given;
// cost_pct_of_on_demand is against on-demand only over the same windows.
func Evaluate(ctx context.Context, job Job, windows []Window, names []string) ([]Result, error) {
	if len(windows) == 0 {
		return nil, fmt.Errorf("no windows to replay: every trace file is shorter than one window")
	}
	od, err := meanOutcome(ctx, "od", job, windows)
	if err != nil {
		return nil, err
	}
	out := make([]Result, 0, len(names))
	for _, name := range names {
		r := od
		if name != "od" {
			if r, err = meanOutcome(ctx, name, job, windows); err != nil {
				return nil, err
			}
		}
		r.CostPct = 100 * r.MeanCost / od.MeanCost
		out = append(out, r)
	}
	return out, nil
}

// meanOutcome runs one policy over all windows, as many at once as there are CPUs; the sums are
// taken in window order, so the figures do not depend on the schedule.
func meanOutcome(ctx context.Context, name string, job Job, windows []Window) (Result, error) {
	outs, err := runAll(ctx, name, job, windows)
	if err != nil {
		return Result{}, err
	}
	r := Result{Policy: name, Windows: len(windows)}
	met := 0
	for _, o := range outs {
		r.MeanCost += o.Cost
		met += b2i(o.Met)
	}
	r.MeanCost /= float64(len(windows))
	r.DeadlinesMetPct = 100 * float64(met) / float64(len(windows))
	return r, nil
}

// runAll runs one policy in every window, in parallel, and returns the outcomes in order.
func runAll(ctx context.Context, name string, job Job, windows []Window) ([]Outcome, error) {
	outs := make([]Outcome, len(windows))
	errs := make([]error, len(windows))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(windows)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				outs[i], errs[i] = Run(name, job, windows[i])
			}
		}()
	}
	for i := range windows {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return outs, errors.Join(errs...)
}
