package anomaly

import (
	"math"
	"math/rand/v2"
	"time"
)

// Leaf is one child series of a workload, as the benchmark injects into it.
type Leaf struct {
	Series   string
	Location string
	OnDemand bool
	// USDPerHour, GPUs and Tokens have one value per step (Tokens may be nil: unknown).
	USDPerHour, GPUs, Tokens []float64
}

// Workload is a scope and its leaves, all on one step grid from Start.
type Workload struct {
	Name   string
	Start  time.Time
	Step   time.Duration
	Leaves []Leaf
}

// Steps is the number of steps of the workload's series.
func (w *Workload) Steps() int {
	if len(w.Leaves) == 0 {
		return 0
	}
	return len(w.Leaves[0].USDPerHour)
}

// Total is the scope's spend: the sum of its leaves, step by step.
func (w *Workload) Total() []Point {
	pts := make([]Point, w.Steps())
	for i := range pts {
		pts[i].At = w.Start.Add(time.Duration(i) * w.Step)
		for _, l := range w.Leaves {
			pts[i].USDPerHour += l.USDPerHour[i]
		}
	}
	return pts
}

// Kind is a kind of injected anomaly (docs/anomalies.md).
type Kind int

// The kinds of anomaly the benchmark injects.
const (
	PriceSpike     Kind = iota // the target's price × Size
	StuckOnDemand              // the target's spot replicas fall back to on-demand at Size × the price and stay
	RunawayScaleUp             // the target's replica count × Size
	DemandSurge                // every leaf's tokens and replicas × Size
	ZoneOutage                 // the target's location goes to 0; its spend moves to the others at Size × the price
)

// Kinds lists every kind, in order.
var Kinds = []Kind{PriceSpike, StuckOnDemand, RunawayScaleUp, DemandSurge, ZoneOutage}

func (k Kind) String() string {
	return [...]string{"price spike", "stuck on-demand fallback", "runaway scale-up", "demand surge", "zone outage"}[k]
}

// Injection is one anomaly put into a workload.
type Injection struct {
	Kind     Kind
	Workload string
	Target   int // leaf index
	Start    time.Time
	Duration time.Duration
	Size     float64
}

// End is when the injection stops.
func (j Injection) End() time.Time { return j.Start.Add(j.Duration) }

// Injection plan: after a warm-up, one injection per slot, starting in the slot's first half
// day, sized ×1.5 to ×5, lasting 15 minutes to 36 hours (log-uniform), cut at the slot's end.
const (
	WarmUp      = 2 * 24 * time.Hour
	Slot        = 2 * 24 * time.Hour
	minDuration = 15 * time.Minute
	maxDuration = 36 * time.Hour
	minSize     = 1.5
	maxSize     = 5
)

// Plan draws the injections for a workload from seed: one per whole slot after the warm-up. The
// target is a leaf drawn in proportion to its spend before the slot (spot leaves only for a
// stuck fallback); a stuck fallback lasts to the slot's end. The plan is the same for the same
// seed and workload.
func Plan(seed uint64, w *Workload) []Injection {
	rng := rand.New(rand.NewPCG(seed, hash(w.Name)))
	var out []Injection
	span := time.Duration(w.Steps()) * w.Step
	for slot := WarmUp; slot+Slot <= span; slot += Slot {
		kind := Kinds[rng.IntN(len(Kinds))]
		start := w.Start.Add(slot + time.Duration(rng.IntN(144))*w.Step)
		d := time.Duration(math.Exp(math.Log(float64(minDuration)) + rng.Float64()*math.Log(float64(maxDuration/minDuration))))
		d = d.Round(w.Step)
		if end := w.Start.Add(slot + Slot); kind == StuckOnDemand || start.Add(d).After(end) {
			d = end.Sub(start)
		}
		target := drawLeaf(rng, w, int(slot/w.Step), kind == StuckOnDemand)
		if target < 0 {
			kind, target = PriceSpike, drawLeaf(rng, w, int(slot/w.Step), false)
		}
		size := minSize + rng.Float64()*(maxSize-minSize)
		out = append(out, Injection{Kind: kind, Workload: w.Name, Target: target, Start: start, Duration: d, Size: math.Round(size*100) / 100})
	}
	return out
}

// drawLeaf draws a leaf in proportion to its spend over the day before step i (-1: none spent).
func drawLeaf(rng *rand.Rand, w *Workload, i int, spotOnly bool) int {
	weights := make([]float64, len(w.Leaves))
	sum := 0.0
	for k, l := range w.Leaves {
		if spotOnly && l.OnDemand {
			continue
		}
		for s := max(0, i-int(24*time.Hour/w.Step)); s < i; s++ {
			weights[k] += l.USDPerHour[s]
		}
		sum += weights[k]
	}
	if sum == 0 {
		return -1
	}
	x := rng.Float64() * sum
	for k, wt := range weights {
		if x < wt {
			return k
		}
		x -= wt
	}
	return len(weights) - 1
}

func hash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := range len(s) {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return h
}
