package serving

import (
	"slices"
	"strconv"
	"time"

	"github.com/bursar-dev/bursar/internal/placement"
)

func init() {
	register("bursar-direct", func(env Env) (Policy, error) { return newDirect(env, true, DirectTarget), nil }, false)
	register("bursar-direct-no-target", func(env Env) (Policy, error) { return newDirect(env, true, 0), nil }, false)
	register("bursar-direct-no-forecast", func(env Env) (Policy, error) { return newDirect(env, false, DirectTarget), nil }, false)
}

// DirectTarget is the availability target (percent of minutes) bursar-direct plans its workload
// for: the share SERVING.md's goal asks of the service. bursar-direct-no-target plans without
// one (the planner's fixed hedge and fallback risks), to show what the target costs and buys.
const DirectTarget = 99.5

// direct drives Bursar's planner alone (placement.Plan) tick by tick, as the arbiter would: one
// workload planned by rate, throughput per GPU type from the profile, one offer per source, and the
// demand it is sized for from its forecaster (placement.Forecaster) fed minute by minute, the
// days before the window first. Without the forecast it is sized for the last minute's demand.
//
// The simulator counts replicas per source; the planner wants replicas with ids, states and launch
// times, and what each spot offer has shown (failed launches, preemptions, survival). direct keeps
// that itself by the simulator's rules: a source that holds fewer than it had lost its newest
// (the clamp's rule), and the oldest of a source's replicas are its ready ones.
type direct struct {
	sources   []Source
	coldStart int
	policy    placement.Policy
	f         *placement.Forecaster
	forecast  bool
	target    float64      // availability target, percent; 0: none
	past      []float64    // the demand before the window
	live      [][]launched // per source, oldest first
	// throughput, models and locations are the workload's rates, GPU models and the sources'
	// zones: the same at every tick, so built once (newDirect).
	throughput map[string]float64
	models     []string
	locations  []placement.Location
	history    [][]placement.Observation
	nextID     int
	// lastMove is when the planner last moved the workload for price and prevMove the move
	// before, as the arbiter's book keeps them: a move whose launches all found no capacity moved
	// nothing, and the cooldown is the previous move's again (internal/arbiter/giveup.go).
	lastMove, prevMove time.Time
}

type launched struct {
	id   int
	tick int
	move bool // launched by a move for price
}

// directWorkload is the planner's name for the replayed service.
const directWorkload = "svc"

// directEpoch is the wall time of tick 0: the planner reasons in time, the simulator in ticks.
var directEpoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func newDirect(env Env, forecast bool, target float64) *direct {
	p := placement.DefaultPolicy()
	p.ReactionTime = time.Minute
	d := &direct{sources: env.Sources, coldStart: env.ColdStart, policy: p, forecast: forecast, target: target, past: env.PastDemand,
		f:    placement.NewForecaster(24*60, max(env.ColdStart, 1)),
		live: make([][]launched, len(env.Sources)), history: make([][]placement.Observation, len(env.Sources))}
	d.f.Replay(env.PastDemand)
	d.throughput = map[string]float64{}
	zones := map[string]bool{}
	for _, src := range env.Sources {
		d.throughput[src.Type] = src.Rate
		d.models = appendNew(d.models, src.Type)
		if !zones[src.Zone] {
			zones[src.Zone] = true
			d.locations = append(d.locations, placement.Location{ID: src.Zone, Zone: src.Zone})
		}
	}
	return d
}

func (d *direct) Decide(obs *Observation) Decision {
	t := obs.Tick
	rate := 0.0
	if t > 0 {
		d.reconcile(obs.Held[t-1], t-1)
		d.f.Observe(obs.Demand[t-1])
		rate = obs.Demand[t-1]
	} else if n := len(d.past); n > 0 {
		rate = d.past[n-1]
	}
	switch {
	case d.forecast && d.target > 0:
		rate = max(rate, d.f.ExpectWithin(placement.DemandShare(d.target)))
	case d.forecast:
		rate = max(rate, d.f.Expect())
	}
	d.apply(placement.Plan(d.snapshot(t, rate, obs), d.policy, d.at(t)), t)
	out := Decision{Held: make([]int, len(d.sources))}
	for i := range d.sources {
		out.Held[i] = len(d.live[i])
	}
	return out
}

// MAPE is the forecast's error at the cold-start horizon over what it has seen.
func (d *direct) MAPE() float64 {
	if !d.forecast {
		return 0
	}
	pct, _ := d.f.MAPE()
	return pct
}

func (d *direct) at(t int) time.Time { return directEpoch.Add(time.Duration(t) * time.Minute) }

// reconcile learns what the clamp of tick s took: the newest replicas beyond what is held. One
// launched at s found no capacity; an older one was reclaimed after living s-launch ticks.
func (d *direct) reconcile(held []int, s int) {
	moved := map[int]bool{} // sources where a launch of the last move found no capacity
	for i, n := range held {
		for len(d.live[i]) > n {
			lost := d.live[i][len(d.live[i])-1]
			d.live[i] = d.live[i][:len(d.live[i])-1]
			ob := placement.Observation{At: d.at(s), Kind: placement.ObsLaunchFailed}
			if lost.tick < s {
				ob = placement.Observation{At: d.at(s), Kind: placement.ObsPreempted, Lived: time.Duration(s-lost.tick) * time.Minute}
			} else if lost.move && d.at(lost.tick).Equal(d.lastMove) {
				moved[i] = true
			}
			d.history[i] = append(d.history[i], ob)
		}
	}
	if len(moved) > 0 && !d.holdsLastMove(moved) {
		d.lastMove = d.prevMove
	}
}

// holdsLastMove says whether the last move for price still holds a replica: one it launched, or
// one launched with it on a source where one of its launches failed (the clamp takes the newest,
// whichever launch that was), as the arbiter's book judges it.
func (d *direct) holdsLastMove(moved map[int]bool) bool {
	for i, rs := range d.live {
		for _, r := range rs {
			if d.at(r.tick).Equal(d.lastMove) && (r.move || moved[i]) {
				return true
			}
		}
	}
	return false
}

// snapshot is the planner's view at tick t: one offer per source with its last day of history,
// and the replicas held at the end of tick t-1, the oldest Ready of each source ready.
func (d *direct) snapshot(t int, rate float64, obs *Observation) placement.Snapshot {
	now := d.at(t)
	w := placement.Workload{ID: directWorkload, MinReplicas: 1, GPUsPerReplica: 1, RateUnit: "tokens/s",
		Throughput: d.throughput, GPUModels: d.models, DemandRate: rate, LastMoveAt: d.lastMove,
		AvailabilityTarget: d.target, ColdStart: time.Duration(d.coldStart) * time.Minute}
	s := placement.Snapshot{Locations: d.locations}
	for i, src := range d.sources {
		market := placement.MarketOnDemand
		if src.Spot {
			market = placement.MarketSpot
			d.history[i] = recent(d.history[i], now)
		}
		s.Offers = append(s.Offers, placement.Offer{ID: strconv.Itoa(i), Location: src.Zone, InstanceType: src.Type,
			GPUModel: src.Type, GPUCount: max(src.GPUs, 1), Market: market, PricePerHour: src.USDPerHour, History: d.history[i]})
		ready := 0
		if t > 0 {
			ready = obs.Ready[t-1][i]
		}
		for k, r := range d.live[i] {
			state := placement.StateLaunching
			if k < ready {
				state = placement.StateReady
			}
			s.Replicas = append(s.Replicas, placement.Replica{ID: strconv.Itoa(r.id), Workload: directWorkload,
				Offer: strconv.Itoa(i), State: state, Since: d.at(r.tick)})
		}
	}
	s.Workloads = []placement.Workload{w}
	return s
}

// apply carries out the plan's launches and drains; a drain ends the newest of its source, as the
// simulator releases them.
func (d *direct) apply(plan placement.Decision, t int) {
	for _, a := range plan.Actions {
		i, err := strconv.Atoi(a.Offer)
		if err != nil || i < 0 || i >= len(d.live) {
			continue
		}
		switch a.Kind {
		case placement.ActionLaunch:
			move := a.Reason == placement.ReasonCheaperOffer
			if move && !d.lastMove.Equal(d.at(t)) { // one move may launch on several offers
				d.prevMove, d.lastMove = d.lastMove, d.at(t)
			}
			for range a.Count {
				d.live[i] = append(d.live[i], launched{id: d.nextID, tick: t, move: move})
				d.nextID++
			}
		case placement.ActionDrain:
			for n := len(a.Replicas); n > 0 && len(d.live[i]) > 0; n-- {
				gone := d.live[i][len(d.live[i])-1]
				d.live[i] = d.live[i][:len(d.live[i])-1]
				if d.sources[i].Spot {
					d.history[i] = append(d.history[i], placement.Observation{At: d.at(t), Kind: placement.ObsEnded,
						Lived: time.Duration(t-gone.tick) * time.Minute})
				}
			}
		}
	}
}

// recent drops observations older than a day: beyond it their weight is negligible under the
// planner's default half-lives, and the snapshot stays small.
func recent(hist []placement.Observation, now time.Time) []placement.Observation {
	keep := 0
	for keep < len(hist) && now.Sub(hist[keep].At) > 24*time.Hour {
		keep++
	}
	return hist[keep:]
}

func appendNew(xs []string, x string) []string {
	if slices.Contains(xs, x) {
		return xs
	}
	return append(xs, x)
}
