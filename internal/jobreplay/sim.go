// Package jobreplay replays deadline-bound, checkpointed jobs on spot capacity under the rules of the
// Can't-Be-Late simulator (Wu et al., NSDI'24), written down in ../shared/JOBS.md, so that
// on-demand, Greedy, Uniform Progress, a hindsight optimum and Bursar's deadline planner are
// compared on equal terms. This package is the rules' single implementation: every quantity is a
// whole number of seconds, as in the reference, so its numbers match the reference to the cent.
package jobreplay

import (
	"errors"
	"fmt"
)

// Kind is what runs the job during one tick.
type Kind int8

// The kinds of JOBS.md: nothing, a spot instance, an on-demand instance.
const (
	None Kind = iota
	Spot
	OnDemand
)

func (k Kind) String() string {
	switch k {
	case Spot:
		return "spot"
	case OnDemand:
		return "od"
	}
	return "none"
}

// Choice is a kind and, for spot, the zone it runs in (index into the market's zones). Zone is -1
// for none and on-demand: there is one on-demand offer, wherever the job's zones are.
type Choice struct {
	Kind Kind
	Zone int
}

// Idle is the choice to run nothing.
var Idle = Choice{Kind: None, Zone: -1}

// OD is the choice to run on-demand.
var OD = Choice{Kind: OnDemand, Zone: -1}

// SpotIn is the choice to run on spot in zone z.
func SpotIn(z int) Choice { return Choice{Kind: Spot, Zone: z} }

// Setting is one job and its prices: JOBS.md's inputs, in seconds and USD per hour.
type Setting struct {
	Tick     int64 // g: the trace's gap_seconds
	Work     int64 // C0: compute the job needs
	Deadline int64 // D: from the job's start
	Overhead int64 // d: billed, unproductive time per (re)launch
	// SpotPrice and ODPrice are per hour; JOBS.md uses 0.9731 and 3.06 for every file.
	SpotPrice, ODPrice float64
}

// Reference prices of JOBS.md.
const (
	RefSpotPrice = 0.9731
	RefODPrice   = 3.06
)

// Validate says what is wrong with a setting, in the flags' words.
func (s Setting) Validate() error {
	switch {
	case s.Tick <= 0:
		return fmt.Errorf("tick must be positive, got %d s", s.Tick)
	case s.Work <= 0:
		return fmt.Errorf("--work must be positive, got %d s", s.Work)
	case s.Deadline <= 0:
		return fmt.Errorf("--deadline must be positive, got %d s", s.Deadline)
	case s.Overhead < 0:
		return fmt.Errorf("--overhead must not be negative, got %d s", s.Overhead)
	case s.SpotPrice < 0 || s.ODPrice < 0:
		return fmt.Errorf("prices must not be negative (spot %g, on-demand %g)", s.SpotPrice, s.ODPrice)
	}
	return nil
}

// View is what a policy knows at one decision (JOBS.md step 3). It is reused between ticks: a
// policy must not keep it.
type View struct {
	Setting
	T       int64  // t: time since the job's start, k·g
	Done    int64  // W: work done (checkpointed)
	Pending int64  // r: overhead the current instance has still to burn
	Prev    Choice // what ran last tick; still spot when that instance was just preempted
	Running Choice // what runs now: Idle after a preemption
	// Spot[z] says spot can be had in zone z now; one entry in a single-zone replay.
	Spot []bool
}

// Left is the work still to do, C = C0 − W.
func (v *View) Left() int64 { return v.Work - v.Done }

// Slack is R = D − t, the time left to the deadline.
func (v *View) Slack() int64 { return v.Deadline - v.T }

// Policy decides what runs the job during the next tick. The simulator applies JOBS.md's
// guarantee (step 4) and the availability rule (step 5) to whatever it returns.
type Policy interface {
	Decide(v *View) Choice
}

// Overlapper is a policy whose choice may leave the instance that ran the tick before held for
// part of the new tick: the live service moves make-before-break, retiring the old instance only
// once the new one got capacity. Overlap is what else was held during the tick just decided and
// for how many seconds (0 when nothing); Simulate bills it on top of the tick, at that kind's
// price. JOBS.md's policies hold one instance at a time and are not Overlappers.
type Overlapper interface {
	Overlap() (held Choice, seconds int64)
}

// Latecomer is a policy whose choice may begin later than the tick's start, with nothing run
// before it: the live service tries one spot zone after another within the tick, each launch
// that finds no capacity given up at the next report. Late is how many seconds into the tick
// just decided its choice got capacity; Simulate adds them to that launch's overhead, so the
// seconds spent trying are lost work (the tick is still billed whole). JOBS.md's policies know
// every zone's availability at the tick's start and are not Latecomers.
type Latecomer interface {
	Late() (seconds int64)
}

// Outcome is one job's run over one window.
type Outcome struct {
	// Cost is the bill: whole ticks of what ran, and OverlapCost, what an Overlapper held beside.
	Cost        float64 `json:"cost"`
	OverlapCost float64 `json:"overlap_cost,omitempty"`
	End         int64   `json:"end_s"`
	Met         bool    `json:"deadline_met"`
	SpotTicks   int     `json:"spot_ticks"`
	ODTicks     int     `json:"od_ticks"`
	Launches    int     `json:"launches"`
	// Preemptions counts spot instances taken back while the job was not done.
	Preemptions int `json:"preemptions"`
}

// ErrUnfinished says a window ended before the job did.
var ErrUnfinished = errors.New("job unfinished at the window's end")

// state is the simulator's state between ticks: JOBS.md's prev, r and W.
type state struct {
	prev    Choice
	pending int64
	done    int64
}

// credit applies steps 1 and 2 at a tick boundary: it returns what runs now, and the work and
// overhead the last tick gave (a tick that ran is credited in full, even if preempted at its end).
func (s *state) credit(set *Setting, avail []bool) (running Choice, burn, work int64) {
	running = s.prev
	if s.prev.Kind == Spot && !avail[s.prev.Zone] {
		running = Idle
	}
	if s.prev.Kind == None {
		return running, 0, 0
	}
	burn = min(set.Tick, s.pending)
	work = min(set.Tick-burn, set.Work-s.done)
	s.pending -= burn
	s.done += work
	return running, burn, work
}

// mustRun is JOBS.md step 4's test: the job must run from now on to be done by the deadline.
func mustRun(set *Setting, t, done int64) bool {
	return ceilDiv(set.Work-done+set.Overhead, set.Tick) >= floorDiv(set.Deadline-t, set.Tick)
}

// settle applies steps 4 to 6 to a request and returns what runs during the tick.
func (s *state) settle(set *Setting, t int64, running, req Choice, avail []bool) Choice {
	if mustRun(set, t, s.done) {
		if s.prev.Kind == Spot && s.pending == 0 {
			req = s.prev
		} else {
			req = OD
		}
	}
	if req.Kind == Spot && !avail[req.Zone] {
		req = Idle
	}
	if req.Kind != None && req != running {
		s.pending = set.Overhead
	}
	return req
}

// lateStart adds a Latecomer's lateness to the overhead of the launch it chose, unless step 4
// applied (the guarantee runs on-demand from the tick's start) or step 5 changed the choice.
func (s *state) lateStart(set *Setting, t int64, p Policy, req, asked, running Choice) {
	lc, ok := p.(Latecomer)
	if ok && req == asked && req.Kind != None && req != running && !mustRun(set, t, s.done) {
		s.pending += lc.Late()
	}
}

// Simulate runs one job under p over a window: avail[k][z] says spot can be had in zone z during
// tick k. It ends when the job is done, or with ErrUnfinished when the window runs out first.
func Simulate(set Setting, avail [][]bool, p Policy) (Outcome, error) {
	if err := set.Validate(); err != nil {
		return Outcome{}, err
	}
	var out Outcome
	st := state{prev: Idle}
	v := &View{Setting: set}
	for k := range len(avail) + 1 {
		t := int64(k) * set.Tick
		var running Choice
		var burn, work int64
		if k > 0 {
			running, burn, work = st.credit(&set, avail[min(k, len(avail)-1)])
			if k == len(avail) && st.done < set.Work {
				return out, fmt.Errorf("%w: %d of %d s done after %d ticks", ErrUnfinished, st.done, set.Work, k)
			}
		} else {
			running = Idle
		}
		if st.done >= set.Work {
			out.End = t - set.Tick + burn + work
			out.Met = out.End <= set.Deadline
			return out, nil
		}
		if st.prev.Kind == Spot && running.Kind == None {
			out.Preemptions++
		}
		*v = View{Setting: set, T: t, Done: st.done, Pending: st.pending, Prev: st.prev, Running: running, Spot: avail[k]}
		asked, err := checked(p.Decide(v), len(avail[k]))
		if err != nil {
			return out, fmt.Errorf("tick %d: %w", k, err)
		}
		req := st.settle(&set, t, running, asked, avail[k])
		st.lateStart(&set, t, p, req, asked, running)
		if ov, ok := p.(Overlapper); ok {
			out.OverlapCost += overlapCost(&set, ov)
		}
		out.bill(&set, req, running)
		st.prev = req
	}
	return out, nil // unreachable: the last iteration returns
}

// bill is step 7, and the counts an outcome keeps.
func (o *Outcome) bill(set *Setting, req, running Choice) {
	switch req.Kind {
	case Spot:
		o.SpotTicks++
	case OnDemand:
		o.ODTicks++
	}
	if req.Kind != None && req != running {
		o.Launches++
	}
	o.Cost = cost(set, o.SpotTicks, o.ODTicks) + o.OverlapCost
}

// overlapCost is the price of what an Overlapper held beside the tick's choice.
func overlapCost(set *Setting, ov Overlapper) float64 {
	held, secs := ov.Overlap()
	price := 0.0
	switch held.Kind {
	case Spot:
		price = set.SpotPrice
	case OnDemand:
		price = set.ODPrice
	}
	return price * float64(secs) / 3600
}

// cost is the bill for whole ticks of spot and on-demand.
func cost(set *Setting, spotTicks, odTicks int) float64 {
	hours := float64(set.Tick) / 3600
	return (float64(spotTicks)*set.SpotPrice + float64(odTicks)*set.ODPrice) * hours
}

// checked normalizes a policy's choice and rejects one outside the market.
func checked(c Choice, zones int) (Choice, error) {
	switch c.Kind {
	case None:
		return Idle, nil
	case OnDemand:
		return OD, nil
	case Spot:
		if c.Zone < 0 || c.Zone >= zones {
			return c, fmt.Errorf("policy chose spot in zone %d of %d", c.Zone, zones)
		}
		return c, nil
	}
	return c, fmt.Errorf("policy chose unknown kind %d", c.Kind)
}

func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) == (b < 0) {
		q++
	}
	return q
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
