package placement_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/placement"
)

// This file replays real spot-availability traces under the rules of shared/REPLAY.md (ticks of
// 30 s, capacity clamp newest-first, cold start of 4 ticks, on-demand at 3x spot) to compare the
// planner with SpotHedge on equal terms. It is a check of the planner's behaviour, not the
// product's replay command (internal/replay owns that).

const (
	simTick   = 30 * time.Second
	simWindow = 2880
	simCold   = 4
	simTarget = 3
)

type simTrace struct {
	name  string
	zones []string
	caps  [][]int // per zone, per tick
}

func sharedData(t testing.TB) string {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "data")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("real traces not found at %s (the shared data folder beside the repository): %v", dir, err)
	}
	return dir
}

func loadTrace(t testing.TB, dir string, binary bool) simTrace {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no trace files in %s: %v", dir, err)
	}
	slices.Sort(files)
	tr := simTrace{name: filepath.Base(dir)}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var raw struct {
			Metadata struct {
				Gap float64 `json:"gap_seconds"`
			} `json:"metadata"`
			Data []float64 `json:"data"`
		}
		if err := json.Unmarshal(b, &raw); err != nil {
			t.Fatalf("decoding %s: %v", f, err)
		}
		rep := max(1, int(math.Round(raw.Metadata.Gap/30)))
		caps := make([]int, 0, len(raw.Data)*rep)
		for _, c := range raw.Data {
			v := int(c)
			if binary && v > 0 {
				v = 1 << 20
			}
			for range rep {
				caps = append(caps, v)
			}
		}
		tr.zones = append(tr.zones, strings.TrimSuffix(filepath.Base(f), ".json"))
		tr.caps = append(tr.caps, caps)
	}
	return tr
}

func (tr simTrace) length() int {
	l := math.MaxInt
	for _, c := range tr.caps {
		l = min(l, len(c))
	}
	return l
}

// simPolicy decides, at each tick, the held instances: it gets the world and changes it.
type simPolicy interface {
	step(w *simWorld, t int)
}

type simInstance struct {
	id     int
	zone   int // -1: on-demand
	launch int
}

type simWorld struct {
	tr       simTrace
	off      int
	inst     []simInstance
	nextID   int
	counts   [][]int // per tick: per zone spot counts after clamp, then on-demand last
	asked    []int   // per zone: count asked at the last tick before the clamp
	history  [][]placement.Observation
	lostZone []bool // zones that lost instances at the last tick
}

func (w *simWorld) launch(zone, t int) {
	w.inst = append(w.inst, simInstance{id: w.nextID, zone: zone, launch: t})
	w.nextID++
}

func (w *simWorld) held(zone int) int {
	n := 0
	for _, in := range w.inst {
		if in.zone == zone {
			n++
		}
	}
	return n
}

func simTime(t int) time.Time {
	return time.Unix(1_700_000_000, 0).UTC().Add(time.Duration(t) * simTick)
}

// clamp applies zone capacities at tick t: the newest instances beyond capacity are lost.
func (w *simWorld) clamp(t int) {
	nz := len(w.tr.zones)
	w.asked = make([]int, nz)
	w.lostZone = make([]bool, nz)
	for z := range nz {
		w.asked[z] = w.held(z)
	}
	slices.SortStableFunc(w.inst, func(a, b simInstance) int { return a.launch - b.launch })
	kept := w.inst[:0]
	seen := make([]int, nz)
	for _, in := range w.inst {
		if in.zone >= 0 {
			seen[in.zone]++
			if seen[in.zone] > w.tr.caps[in.zone][w.off+t] {
				w.lostZone[in.zone] = true
				ob := placement.Observation{At: simTime(t), Kind: placement.ObsLaunchFailed}
				if in.launch < t {
					ob = placement.Observation{At: simTime(t), Kind: placement.ObsPreempted,
						Lived: time.Duration(t-in.launch) * simTick}
				}
				w.history[in.zone] = append(w.history[in.zone], ob)
				continue
			}
		}
		kept = append(kept, in)
	}
	w.inst = kept
	row := make([]int, nz+1)
	for _, in := range w.inst {
		if in.zone >= 0 {
			row[in.zone]++
		} else {
			row[nz]++
		}
	}
	w.counts = append(w.counts, row)
}

// readyAt is the REPLAY.md readiness: per zone (and on-demand), the minimum count over t-D..t.
func (w *simWorld) readyAt(t int) (spot, od int) {
	if t < simCold {
		return 0, 0
	}
	nz := len(w.tr.zones)
	for z := 0; z <= nz; z++ {
		m := math.MaxInt
		for k := t - simCold; k <= t; k++ {
			m = min(m, w.counts[k][z])
		}
		if z == nz {
			od = m
		} else {
			spot += m
		}
	}
	return spot, od
}

type simResult struct{ avail, cost float64 }

func runWindow(tr simTrace, off int, pol simPolicy) simResult {
	w := &simWorld{tr: tr, off: off, history: make([][]placement.Observation, len(tr.zones))}
	up, cost := 0, 0
	for t := range simWindow {
		pol.step(w, t)
		w.clamp(t)
		row := w.counts[t]
		for z, c := range row {
			if z == len(tr.zones) {
				cost += 3 * c
			} else {
				cost += c
			}
		}
		if t >= simCold {
			s, o := w.readyAt(t)
			if s+o >= simTarget {
				up++
			}
		}
	}
	n := simWindow - simCold
	return simResult{avail: 100 * float64(up) / float64(n), cost: 100 * float64(cost) / float64(3*3*n)}
}

// spotHedge is the SpotHedge baseline of REPLAY.md (N=3, E=1, on-demand fallback).
type spotHedge struct {
	rng        *rand.Rand
	preemptive []bool
}

func (p *spotHedge) step(w *simWorld, t int) {
	nz := len(w.tr.zones)
	if p.preemptive == nil {
		p.preemptive = make([]bool, nz)
	}
	if t > 0 {
		for z := range nz {
			got := w.counts[t-1][z]
			if got < w.asked[z] {
				p.preemptive[z] = true
			} else if w.asked[z] >= 1 {
				p.preemptive[z] = false
			}
		}
	}
	var active []int
	for z := range nz {
		if !p.preemptive[z] {
			active = append(active, z)
		}
	}
	if len(active) <= min(1, nz-3) {
		clear(p.preemptive)
		active = active[:0]
		for z := range nz {
			active = append(active, z)
		}
	}
	spot := 0
	for z := range nz {
		spot += w.held(z)
	}
	for ; spot < simTarget+1; spot++ {
		var empty []int
		for _, z := range active {
			if w.held(z) == 0 {
				empty = append(empty, z)
			}
		}
		pool := active
		if len(empty) > 0 {
			pool = empty
		}
		w.launch(pool[p.rng.IntN(len(pool))], t)
	}
	readySpot := 0
	if t > 0 {
		readySpot, _ = w.readyAt(t - 1)
	}
	wantOD := max(0, min(simTarget, simTarget+1-readySpot))
	od := w.held(-1)
	for ; od < wantOD; od++ {
		w.launch(-1, t)
	}
	if od > wantOD {
		w.dropOD(od - wantOD)
	}
}

func (w *simWorld) dropOD(n int) {
	kept := w.inst[:0]
	for i := len(w.inst) - 1; i >= 0; i-- {
		_ = i
	}
	for _, in := range w.inst {
		if in.zone < 0 && n > 0 {
			n--
			continue
		}
		kept = append(kept, in)
	}
	w.inst = kept
}

// plannerPolicy drives placement.Plan tick by tick.
type plannerPolicy struct {
	policy placement.Policy
	last   placement.Decision
}

func (p *plannerPolicy) snapshot(w *simWorld, t int) placement.Snapshot {
	now := simTime(t)
	s := placement.Snapshot{Workloads: []placement.Workload{{ID: "svc", GPUModels: []string{"V100"},
		GPUsPerReplica: 1, MinReplicas: simTarget, Demand: simTarget, ColdStart: simCold * simTick}}}
	for z, name := range w.tr.zones {
		s.Locations = append(s.Locations, placement.Location{ID: name, Zone: name})
		var hist []placement.Observation
		for _, ob := range w.history[z] {
			if now.Sub(ob.At) < 24*time.Hour {
				hist = append(hist, ob)
			}
		}
		w.history[z] = hist
		s.Offers = append(s.Offers, placement.Offer{ID: name, Location: name, InstanceType: "p3",
			GPUModel: "V100", GPUCount: 1, Market: placement.MarketSpot, PricePerHour: 1, History: hist})
	}
	s.Locations = append(s.Locations, placement.Location{ID: "od", Zone: "od"})
	s.Offers = append(s.Offers, placement.Offer{ID: "od", Location: "od", InstanceType: "p3",
		GPUModel: "V100", GPUCount: 1, Market: placement.MarketOnDemand, PricePerHour: 3})
	for _, in := range w.inst {
		st := placement.StateLaunching
		if t-in.launch > simCold {
			st = placement.StateReady
		}
		offer := "od"
		if in.zone >= 0 {
			offer = w.tr.zones[in.zone]
		}
		s.Replicas = append(s.Replicas, placement.Replica{ID: fmt.Sprint(in.id), Workload: "svc",
			Offer: offer, State: st, Since: simTime(in.launch)})
	}
	return s
}

func (p *plannerPolicy) step(w *simWorld, t int) {
	d := placement.Plan(p.snapshot(w, t), p.policy, simTime(t))
	p.last = d
	zone := map[string]int{"od": -1}
	for z, name := range w.tr.zones {
		zone[name] = z
	}
	for _, a := range d.Actions {
		switch a.Kind {
		case placement.ActionLaunch:
			for range a.Count {
				w.launch(zone[a.Offer], t)
			}
		case placement.ActionDrain:
			for _, id := range a.Replicas {
				w.inst = slices.DeleteFunc(w.inst, func(in simInstance) bool {
					if fmt.Sprint(in.id) == id {
						if in.zone >= 0 {
							w.history[in.zone] = append(w.history[in.zone], placement.Observation{
								At: simTime(t), Kind: placement.ObsEnded, Lived: time.Duration(t-in.launch) * simTick})
						}
						return true
					}
					return false
				})
			}
		}
	}
}

type simCase struct {
	dir     string
	binary  bool
	offsets []int
}

func simCases(t testing.TB) []simCase {
	root := sharedData(t)
	peer := []int{2732, 10799, 9845, 19648, 13123, 21243, 9225, 24275, 20757, 22258}
	cases := []simCase{
		{dir: "traces/skyserve/AWS1", offsets: peer},
		{dir: "traces/skyserve/AWS2", offsets: peer},
		{dir: "traces/cant-be-late/preemption-1node-aws-04-22-2023", binary: true},
		{dir: "traces/cant-be-late/availability-1node-aws-10-26-2022", binary: true},
		{dir: "traces/cant-be-late/preemption-1node-aws-04-19-2023-cpu", binary: true},
		{dir: "traces/cant-be-late/preemption-1node-gcp-04-30-2023-cpu", binary: true},
	}
	for i := range cases {
		cases[i].dir = filepath.Join(root, cases[i].dir)
	}
	return cases
}

func evenOffsets(l int) []int {
	var out []int
	for i := range 10 {
		out = append(out, (l-simWindow-1)*i/10)
	}
	return out
}

func meanOver(tr simTrace, offsets []int, mk func(seed int) simPolicy) simResult {
	var sum simResult
	for i, o := range offsets {
		r := runWindow(tr, o, mk(i))
		sum.avail += r.avail
		sum.cost += r.cost
	}
	n := float64(len(offsets))
	return simResult{avail: sum.avail / n, cost: sum.cost / n}
}

func TestTraceReplayAgainstSpotHedge(t *testing.T) {
	if testing.Short() {
		t.Skip("replays real traces; skipped in -short")
	}
	for _, c := range simCases(t) {
		tr := loadTrace(t, c.dir, c.binary)
		offs := c.offsets
		if offs == nil {
			offs = evenOffsets(tr.length())
		}
		sh := meanOver(tr, offs, func(seed int) simPolicy {
			return &spotHedge{rng: rand.New(rand.NewPCG(uint64(seed), 0))}
		})
		pl := meanOver(tr, offs, func(int) simPolicy { return &plannerPolicy{} })
		t.Logf("%-45s spothedge avail %6.2f%% cost %6.2f%% | planner avail %6.2f%% cost %6.2f%% (%.0f%% of spothedge)",
			tr.name, sh.avail, sh.cost, pl.avail, pl.cost, 100*pl.cost/sh.cost)
	}
}
