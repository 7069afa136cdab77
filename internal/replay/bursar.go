package replay

import (
	"strconv"
	"time"

	"github.com/bursar-dev/bursar/internal/placement"
)

func init() {
	register("bursar-direct", newBursar, false)
}

// bursar drives Bursar's real planner (placement.Plan) tick by tick: it turns what the replay has
// shown so far into a placement snapshot, plans, and holds what the plan launches and drains.
//
// The replay counts instances; the planner wants replicas with ids, states and launch times, and
// a history of failed launches, preemptions and survival per offer. bursar keeps that ledger
// itself, consistent with the replay's rules: when a zone's count drops, its newest instances are
// the ones gone (the clamp's rule), and a drain also removes the newest in its zone, since the
// replay's readiness (the minimum count over the cold start) treats the oldest as the ready ones.
type bursar struct {
	rules  Rules
	zones  []string
	policy placement.Policy
	// live[i] are source i's instances, oldest first: the zones, then on-demand last.
	live [][]instance
	// history[z] is what zone z's spot offer has shown: failed launches, preemptions, ends.
	history [][]placement.Observation
	nextID  int
	// lastMove is when the planner last moved the workload for price and prevMove the move before,
	// as the arbiter's book keeps them: the planner's cooldown holds the next price move back, and
	// a move whose launches all failed moved nothing (its cooldown gives way to the previous one).
	lastMove, prevMove time.Time
}

type instance struct {
	id     int
	launch int  // tick
	move   bool // launched by a move for price
}

// The planner's view of the replay: one workload, one spot offer per zone at price 1 per hour,
// and one on-demand offer at the on-demand ratio.
const (
	bursarWorkload = "svc"
	bursarGPU      = "V100"
	bursarOnDemand = "on-demand"
)

// bursarEpoch is the wall time of tick 0; the planner reasons in time, the replay in ticks.
var bursarEpoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// bursarMemory is how long observations are kept: beyond it their decayed weight is negligible
// under the planner's default half-lives, and the snapshot stays small.
const bursarMemory = 24 * time.Hour

func newBursar(env Env) (Policy, error) {
	p := placement.DefaultPolicy()
	p.ReactionTime = env.Rules.TickLength()
	// --extra is the hedge budget: the planner decides whether to hold spares, up to E of them.
	p.MaxHedge = env.Rules.Extra
	if env.Rules.Extra == 0 {
		p.MaxHedge = -1
	}
	return &bursar{
		rules:   env.Rules,
		zones:   env.Zones,
		policy:  p,
		live:    make([][]instance, len(env.Zones)+1),
		history: make([][]placement.Observation, len(env.Zones)),
	}, nil
}

func (b *bursar) Decide(obs *Observation) Decision {
	t := obs.Tick
	if t == 0 {
		b.warmUp(obs.Past)
	} else {
		b.reconcile(obs.Held[t-1], t-1)
	}
	b.apply(placement.Plan(b.snapshot(t), b.policy, b.at(t)), t)
	d := Decision{Spot: make([]int, len(b.zones)), OnDemand: len(b.live[len(b.zones)])}
	for z := range b.zones {
		d.Spot[z] = len(b.live[z])
	}
	return d
}

// warmUp lets the planner learn from the market before the window, as a running service would
// have: it plans over the last bursarMemory of past ticks under the same clamp, keeps what it
// observed (failed launches, preemptions, survival) and then starts the window with nothing held,
// like every other policy.
func (b *bursar) warmUp(past [][]int) {
	n := min(len(past), int(bursarMemory/b.rules.TickLength()))
	for s := -n; s < 0; s++ {
		b.apply(placement.Plan(b.snapshot(s), b.policy, b.at(s)), s)
		held := make([]int, len(b.zones))
		for z := range held {
			held[z] = min(len(b.live[z]), past[len(past)+s][z])
		}
		b.reconcile(held, s)
	}
	for i := range b.live {
		for _, in := range b.live[i] {
			if i < len(b.zones) {
				b.history[i] = append(b.history[i], placement.Observation{At: b.at(0), Kind: placement.ObsEnded, Lived: b.lived(in, 0)})
			}
		}
		b.live[i] = nil
	}
}

func (b *bursar) at(t int) time.Time {
	return bursarEpoch.Add(time.Duration(t) * b.rules.TickLength())
}

// reconcile learns what the clamp of tick s took: the newest instances beyond what is held. One
// launched at s failed to launch; an older one was preempted after living s-launch ticks.
func (b *bursar) reconcile(held []int, s int) {
	moved := map[int]bool{} // zones where a launch of the last move failed
	defer func() {
		if len(moved) > 0 && !b.holdsLastMove(moved) {
			b.lastMove = b.prevMove
		}
	}()
	for z, n := range held {
		for len(b.live[z]) > n {
			lost := b.live[z][len(b.live[z])-1]
			b.live[z] = b.live[z][:len(b.live[z])-1]
			if lost.move && b.at(lost.launch).Equal(b.lastMove) {
				moved[z] = true
			}
			ob := placement.Observation{At: b.at(s), Kind: placement.ObsLaunchFailed}
			if lost.launch < s {
				ob = placement.Observation{At: b.at(s), Kind: placement.ObsPreempted, Lived: b.lived(lost, s)}
			}
			b.history[z] = append(b.history[z], ob)
		}
	}
}

// holdsLastMove says whether the last move for price still holds an instance: one it launched,
// or one launched with it in a zone where one of its launches failed (the clamp takes the newest,
// whichever launch that was), as the arbiter's book judges it.
func (b *bursar) holdsLastMove(moved map[int]bool) bool {
	for z, insts := range b.live {
		for _, in := range insts {
			if b.at(in.launch).Equal(b.lastMove) && (in.move || moved[z]) {
				return true
			}
		}
	}
	return false
}

func (b *bursar) lived(in instance, s int) time.Duration {
	return time.Duration(s-in.launch) * b.rules.TickLength()
}

// snapshot is the planner's view at tick t: offers with their recent history, and the replicas
// with their state as of the end of tick t-1.
func (b *bursar) snapshot(t int) placement.Snapshot {
	now := b.at(t)
	w := placement.Workload{
		ID: bursarWorkload, GPUModels: []string{bursarGPU}, GPUsPerReplica: 1,
		MinReplicas: b.rules.Target, Demand: b.rules.Target,
		ColdStart:  time.Duration(b.rules.ColdStart) * b.rules.TickLength(),
		LastMoveAt: b.lastMove,
	}
	s := placement.Snapshot{Workloads: []placement.Workload{w}}
	for z, name := range b.zones {
		b.history[z] = forget(b.history[z], now)
		s.Locations = append(s.Locations, placement.Location{ID: name, Zone: name})
		s.Offers = append(s.Offers, b.offer(name, placement.MarketSpot, 1, b.history[z]))
	}
	s.Locations = append(s.Locations, placement.Location{ID: bursarOnDemand, Zone: bursarOnDemand})
	s.Offers = append(s.Offers, b.offer(bursarOnDemand, placement.MarketOnDemand, b.rules.ODRatio, nil))
	for i, insts := range b.live {
		for _, in := range insts {
			s.Replicas = append(s.Replicas, placement.Replica{
				ID: strconv.Itoa(in.id), Workload: bursarWorkload, Offer: s.Offers[i].ID,
				State: b.state(in, t), Since: b.at(in.launch),
			})
		}
	}
	return s
}

func (b *bursar) offer(id string, m placement.Market, price float64, hist []placement.Observation) placement.Offer {
	return placement.Offer{
		ID: id, Location: id, InstanceType: "replay", GPUModel: bursarGPU, GPUCount: 1,
		Market: m, PricePerHour: price, History: hist,
	}
}

// state is an instance's state as known at the end of tick t-1: ready once it has survived the
// cold start (ready at t-1 means launched at or before t-1-D).
func (b *bursar) state(in instance, t int) placement.ReplicaState {
	if t-1-in.launch >= b.rules.ColdStart {
		return placement.StateReady
	}
	return placement.StateLaunching
}

// forget drops observations older than bursarMemory.
func forget(hist []placement.Observation, now time.Time) []placement.Observation {
	keep := 0
	for keep < len(hist) && now.Sub(hist[keep].At) > bursarMemory {
		keep++
	}
	return hist[keep:]
}

// apply carries out the plan's launches and drains on the ledger.
func (b *bursar) apply(plan placement.Decision, t int) {
	source := make(map[string]int, len(b.zones)+1)
	for z, name := range b.zones {
		source[name] = z
	}
	source[bursarOnDemand] = len(b.zones)
	for _, a := range plan.Actions {
		i, ok := source[a.Offer]
		if !ok {
			continue
		}
		switch a.Kind {
		case placement.ActionLaunch:
			move := a.Reason == placement.ReasonCheaperOffer
			if move && !b.lastMove.Equal(b.at(t)) { // one move may launch on several offers
				b.prevMove, b.lastMove = b.lastMove, b.at(t)
			}
			for range a.Count {
				b.live[i] = append(b.live[i], instance{id: b.nextID, launch: t, move: move})
				b.nextID++
			}
		case placement.ActionDrain:
			b.drain(i, len(a.Replicas), t)
		}
	}
}

// drain ends n instances of source i, the newest first, recording their survival for spot.
func (b *bursar) drain(i, n, t int) {
	for ; n > 0 && len(b.live[i]) > 0; n-- {
		gone := b.live[i][len(b.live[i])-1]
		b.live[i] = b.live[i][:len(b.live[i])-1]
		if i < len(b.zones) {
			b.history[i] = append(b.history[i], placement.Observation{
				At: b.at(t), Kind: placement.ObsEnded, Lived: b.lived(gone, t),
			})
		}
	}
}
