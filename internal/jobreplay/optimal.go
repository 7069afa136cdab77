package jobreplay

import (
	"fmt"
	"math"
	"slices"
)

// optimal is the hindsight bound: the factory solves the whole window with an exact dynamic
// program under the simulator's own rules (step 4 included), and the policy replays the plan, so
// its outcome is the simulator's, not the program's own arithmetic.
func init() { Register("optimal", newOptimal, true) }

type optimal struct{ plan []Choice }

func newOptimal(env Env) (Policy, error) {
	plan, err := Solve(env.Setting, env.Avail)
	if err != nil {
		return nil, err
	}
	return &optimal{plan}, nil
}

func (p *optimal) Decide(v *View) Choice {
	if k := int(v.T / v.Tick); k < len(p.plan) {
		return p.plan[k]
	}
	return OD
}

// dpPoint is one reachable state at a tick boundary, after that boundary's credit: work done,
// cost so far, and how it was reached (its index in the previous layer and the request made
// there, see link) so the plan can be read back.
type dpPoint struct {
	done   int64
	cost   float64
	parent int32
	req    uint8
}

// before orders points for the Pareto front: more work first, then less cost.
func (a *dpPoint) before(b *dpPoint) bool {
	return a.done > b.done || (a.done == b.done && a.cost < b.cost)
}

// dpLayer is the states at one tick boundary, grouped by slot: what ran last tick and the
// overhead still pending (see solver.slot). Each slot holds its Pareto front, most work first.
type dpLayer struct {
	slots [][]dpPoint
	// runs[sl] are the starts of the ordered runs slot sl was filled with, before pruning.
	runs [][]int
}

// maxZones bounds the zones a plan's links can name (4 bits of request).
const maxZones = 14

// Solve returns the cheapest plan (one request per tick; the simulator's step 4 overrides it
// exactly as it did in the program) that finishes the job in the window, meeting the deadline
// where any plan can.
//
// It is a forward program over states (W, r, prev) per tick, with three prunings that keep it
// exact: under the same (r, prev), a state with at least the work done and at most the cost can
// copy any continuation of the other and never do worse (Pareto); one with more work whose extra
// cost the ticks it saves at the end pay back dominates too (see prune); and a state whose cost
// plus a lower bound on the rest (see rest) exceeds what a reference policy already paid for a
// run that met the deadline cannot lead to a cheaper such run.
func Solve(set Setting, avail [][]bool) ([]Choice, error) {
	if err := set.Validate(); err != nil {
		return nil, err
	}
	if len(avail) > 0 && len(avail[0]) > maxZones {
		return nil, fmt.Errorf("optimal plans over at most %d zones, the market has %d", maxZones, len(avail[0]))
	}
	s := newSolver(set, avail)
	layer := s.newLayer()
	layer.slots[0] = []dpPoint{{parent: -1}}
	for k := 0; k < len(avail) && s.links(layer); k++ {
		layer = s.step(k, layer)
	}
	if math.IsInf(s.best, 1) {
		return nil, fmt.Errorf("%w: no plan finishes the job within %d ticks", ErrUnfinished, len(avail))
	}
	return s.plan(), nil
}

// solver holds the program's layers and the best finish found so far.
type solver struct {
	set    Setting
	avail  [][]bool
	zones  int
	nslots int
	// layers[k][i] links the i-th state at boundary k (slots in order) to its parent: see links.
	layers [][]uint32
	// runLen[k] is how many ticks from k on (before the deadline) some zone has spot without a
	// break; later[k] is the most work the runs after that one can give, each less one overhead.
	runLen, later []int64
	// spotTick is the price of one tick of spot.
	spotTick float64
	// bound is the cost of the cheapest run known to meet the deadline (+Inf before one is).
	bound float64
	// best is the cheapest finish (deadline met first), bestPt its last step and bestK the
	// boundary where it finished.
	best    float64
	bestEnd int64
	bestMet bool
	bestK   int
	bestPt  dpPoint
}

func newSolver(set Setting, avail [][]bool) *solver {
	s := &solver{set: set, avail: avail, best: math.Inf(1), bestEnd: math.MaxInt64, bound: math.Inf(1)}
	if len(avail) > 0 {
		s.zones = len(avail[0])
	}
	s.nslots = (2 + s.zones) * int(set.Overhead/set.Tick+2)
	s.spotRuns()
	s.spotTick = cost(&set, 1, 0)
	for _, name := range []string{"od", "uniform-progress", "greedy"} {
		p, _ := build(name, Env{Setting: set})
		if o, err := Simulate(set, avail, p); err == nil && o.Met {
			s.bound = min(s.bound, o.Cost)
		}
	}
	return s
}

// spotRuns fills runLen and later, the spot the deadline leaves room for.
func (s *solver) spotRuns() {
	set := &s.set
	horizon := min(len(s.avail), int(ceilDiv(set.Deadline, set.Tick))+1)
	s.runLen = make([]int64, len(s.avail)+1)
	s.later = make([]int64, len(s.avail)+1)
	for k := horizon - 1; k >= 0; k-- {
		if slices.Contains(s.avail[k], true) {
			s.runLen[k] = s.runLen[k+1] + 1
			s.later[k] = s.later[k+1]
			continue
		}
		s.later[k] = s.later[k+1] + max(0, s.runLen[k+1]*set.Tick-set.Overhead)
	}
}

// slot numbers the part of a state that must match for one state to dominate another: what ran
// last tick and the overhead still pending, which is 0 or d − m·g. Pending is 0 whenever nothing
// ran: a launch resets it anyway.
func (s *solver) slot(prev Choice, pending int64) int {
	p := 0
	if prev.Kind != None && pending > 0 {
		p = int((s.set.Overhead-pending)/s.set.Tick) + 1
	}
	kind := 0
	switch prev.Kind {
	case OnDemand:
		kind = 1
	case Spot:
		kind = 2 + prev.Zone
	}
	return kind*int(s.set.Overhead/s.set.Tick+2) + p
}

// newLayer is an empty layer.
func (s *solver) newLayer() dpLayer {
	return dpLayer{slots: make([][]dpPoint, s.nslots), runs: make([][]int, s.nslots)}
}

// links records a layer's parent links for the plan and says whether it holds any state.
func (s *solver) links(l dpLayer) bool {
	n := 0
	for _, pts := range l.slots {
		n += len(pts)
	}
	out := make([]uint32, 0, n)
	for _, pts := range l.slots {
		for _, p := range pts {
			out = append(out, uint32(p.parent)<<4|uint32(p.req))
		}
	}
	s.layers = append(s.layers, out)
	return len(out) > 0
}

// step expands the states at boundary k by every request and returns the states of boundary
// k+1 that are unfinished and can still beat the best run, recording the runs that finish.
func (s *solver) step(k int, cur dpLayer) dpLayer {
	set := &s.set
	t := int64(k) * set.Tick
	next := s.newLayer()
	pi := 0
	for sl, pts := range cur.slots {
		prev, pending := s.unslot(sl)
		running := prev
		if prev.Kind == Spot && !s.avail[k][prev.Zone] {
			running = Idle
		}
		for _, pt := range pts {
			st := state{prev: prev, pending: pending, done: pt.done}
			for _, req := range s.requests(k, t, &st) {
				n := st
				got := n.settle(set, t, running, req, s.avail[k])
				c := pt.cost + cost(set, b2i(got.Kind == Spot), b2i(got.Kind == OnDemand))
				n.prev = got
				s.advance(k+1, &next, n, dpPoint{cost: c, parent: int32(pi), req: code(req)})
			}
			pi++
		}
	}
	s.prune(&next)
	return next
}

// unslot is the prev and pending a slot stands for.
func (s *solver) unslot(sl int) (Choice, int64) {
	per := int(s.set.Overhead/s.set.Tick + 2)
	kind, p := sl/per, sl%per
	prev := Idle
	switch {
	case kind == 1:
		prev = OD
	case kind >= 2:
		prev = SpotIn(kind - 2)
	}
	pending := int64(0)
	if p > 0 {
		pending = s.set.Overhead - int64(p-1)*s.set.Tick
	}
	return prev, pending
}

// requests are the distinct requests worth trying from a state: one when step 4 forces the
// choice, else idle, on-demand and spot in each zone that has it.
func (s *solver) requests(k int, t int64, st *state) []Choice {
	if mustRun(&s.set, t, st.done) {
		return []Choice{OD}
	}
	out := []Choice{Idle, OD}
	for z, ok := range s.avail[k] {
		if ok {
			out = append(out, SpotIn(z))
		}
	}
	return out
}

// advance credits the tick just billed (steps 1 and 2 at boundary k) and either records a finish
// or adds the state to the next layer, unless it cannot beat the best run.
func (s *solver) advance(k int, next *dpLayer, n state, pt dpPoint) {
	set := &s.set
	_, burn, work := n.credit(set, s.avail[min(k, len(s.avail)-1)])
	if n.done >= set.Work {
		s.finish(k, pt, int64(k-1)*set.Tick+burn+work)
		return
	}
	pt.done = n.done
	if k < len(s.avail) && pt.cost+s.rest(k, &n) > s.limit() {
		return
	}
	sl := s.slot(n.prev, n.pending)
	pts := next.slots[sl]
	if len(pts) == 0 || pt.before(&pts[len(pts)-1]) {
		next.runs[sl] = append(next.runs[sl], len(pts))
	}
	next.slots[sl] = append(pts, pt)
}

// rest is a lower bound on what the work left costs from boundary k if the deadline is to be
// met: each unbroken run of spot before the deadline gives at most its length less one overhead
// (less what is pending, for the run the job is on now), at the spot price; the remainder runs
// on-demand, after a launch unless on-demand runs now.
func (s *solver) rest(k int, n *state) float64 {
	set := &s.set
	left := set.Work - n.done
	lost := set.Overhead
	running := n.prev.Kind == Spot && s.avail[k][n.prev.Zone]
	if running {
		lost = n.pending
	}
	spot := min(left, s.later[k]+max(0, s.runLen[k]*set.Tick-lost))
	od := float64(left - spot)
	if od > 0 && n.prev.Kind != OnDemand {
		od += float64(set.Overhead)
	}
	return (float64(spot)*set.SpotPrice + od*set.ODPrice) / 3600
}

// limit is the cost above which a state is dropped: the cheapest run known to meet the deadline,
// with room for rounding.
func (s *solver) limit() float64 {
	b := s.bound
	if s.bestMet {
		b = min(b, s.best)
	}
	return b + 1e-9*(1+b)
}

// finish keeps the cheapest finish, preferring one that meets the deadline.
func (s *solver) finish(k int, pt dpPoint, end int64) {
	met := end <= s.set.Deadline
	better := (met && !s.bestMet) || (met == s.bestMet && (pt.cost < s.best || (pt.cost == s.best && end < s.bestEnd)))
	if better {
		s.best, s.bestEnd, s.bestMet, s.bestK, s.bestPt = pt.cost, end, met, k, pt
	}
}

// prune keeps each slot's Pareto front, less the states a state with more work dominates
// although it cost more: one whose extra cost is paid back by the ticks it saves at the end.
// If B has ΔW more work than A, B copying A's continuation finishes at least floor(ΔW/g) ticks
// earlier, each at least a spot tick, so A can go when c_B − c_A ≤ floor(ΔW/g) spot ticks
// (see paidBack). Every slot was filled with a few runs already in order
// (a front expanded by one request stays in order), so a merge of the runs replaces a sort.
func (s *solver) prune(l *dpLayer) {
	for sl, pts := range l.slots {
		if len(pts) == 0 {
			continue
		}
		runs := append(l.runs[sl], len(pts))
		heads := slices.Clone(runs[:len(runs)-1])
		front := make([]dpPoint, 0, len(pts)/2)
		for {
			best := -1
			for r, h := range heads {
				if h < runs[r+1] && (best < 0 || pts[h].before(&pts[heads[best]])) {
					best = r
				}
			}
			if best < 0 {
				break
			}
			p := pts[heads[best]]
			heads[best]++
			if len(front) == 0 || (p.cost < front[len(front)-1].cost && !s.paidBack(front, &p)) {
				front = append(front, p)
			}
		}
		l.slots[sl] = front
	}
}

// paidBackWindow is how many of the front's last points paidBack compares with: a dominance
// test against fewer points than all is still exact, it only prunes less.
const paidBackWindow = 32

// paidBack says a state with more work already on the front dominates p: its extra cost is at
// most the spot ticks it saves at the end (floor(ΔW/g) of them).
func (s *solver) paidBack(front []dpPoint, p *dpPoint) bool {
	for i := len(front) - 1; i >= max(0, len(front)-paidBackWindow); i-- {
		b := &front[i]
		if saved := (b.done - p.done) / s.set.Tick; saved > 0 && b.cost-p.cost <= float64(saved)*s.spotTick+1e-9 {
			return true
		}
	}
	return false
}

// plan reads the requests back from the best finish to tick 0.
func (s *solver) plan() []Choice {
	plan := make([]Choice, s.bestK)
	parent, req := s.bestPt.parent, s.bestPt.req
	for k := s.bestK - 1; k >= 0; k-- {
		plan[k] = decode(req)
		if k > 0 {
			l := s.layers[k][parent]
			parent, req = int32(l>>4), uint8(l&15)
		}
	}
	return plan
}

// code packs a request into 4 bits: 0 idle, 1 on-demand, 2+z spot in zone z.
func code(c Choice) uint8 {
	switch c.Kind {
	case OnDemand:
		return 1
	case Spot:
		return uint8(2 + c.Zone)
	}
	return 0
}

func decode(c uint8) Choice {
	switch c {
	case 0:
		return Idle
	case 1:
		return OD
	}
	return SpotIn(int(c) - 2)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
