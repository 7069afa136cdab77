// Package serving replays token demand against policies that hold replicas of several GPU types,
// in several zones, on spot and on-demand, by the rules of SERVING.md (docs/serving.md): one tick
// is a minute, demand is output tokens/s, capacity comes from real spot traces and prices from
// real catalogs. Every policy, Bursar's and its peers', sees the same inputs and is judged by the
// same simulator (sim.go).
package serving

// Source is one place a replica can be held: a GPU type in a zone, on spot or on-demand.
type Source struct {
	Type       string  // GPU model, e.g. H100-80GB
	Zone       string  // e.g. us-central1-a
	Spot       bool    // spot market (reclaimable, capacity from a trace); false: on-demand
	USDPerHour float64 // price of one replica (one node) per hour
	Rate       float64 // output tokens/s one replica serves at the latency target (the profile)
	GPUs       int     // GPUs in one replica
	Notice     int     // ticks of notice before a reclaim takes a spot replica (0: none)
}

// PastTicks is how much demand before a window its policies are shown: a week of minutes, enough
// for a forecaster's daily season.
const PastTicks = 7 * 24 * 60

// Unlimited is the capacity of a source without a trace (on-demand).
const Unlimited = -1

// Window is one window's inputs. A hindsight policy (optimal) is given the whole Window; an online
// policy sees only what Observation gives it.
type Window struct {
	Sources []Source
	// Demand[t] is the output tokens/s to serve during tick t.
	Demand []float64
	// Past is the demand of the ticks before the window, oldest first (up to PastTicks): what a
	// collector had recorded before the window started, which every policy may read.
	Past []float64
	// Capacity[t][i] is how many replicas source i can hold during tick t (Unlimited for
	// on-demand). A spot source's capacity is its zone's trace in replicas of its GPU count.
	Capacity [][]int
	// ColdStart is how many ticks a launched replica takes to become ready; it is billed meanwhile
	// and ready only if it survived all of them.
	ColdStart int
}

// Decision is what a policy wants held during a tick, per source (Window.Sources order). Counts
// above what is held launch replicas; counts below it release the newest first.
type Decision struct {
	Held []int
}

// Observation is what a policy knows when it decides tick Tick: everything up to the end of tick
// Tick-1 and nothing later. Its slices are the simulator's own history: read them, never write.
type Observation struct {
	Tick    int
	Sources []Source
	// Demand[s] for s < Tick is the demand seen during tick s.
	Demand []float64
	// Held[s][i] is what source i held during tick s after the capacity clamp (launching
	// included); Ready[s][i] how many of those were ready; Capacity[s][i] the source's capacity.
	Held, Ready, Capacity [][]int
	ColdStart             int
}

// Policy decides, tick by tick, how many replicas to hold on each source. A policy is built fresh
// for each window.
type Policy interface {
	Decide(obs *Observation) Decision
}
