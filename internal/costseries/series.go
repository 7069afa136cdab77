// Package costseries builds cost series from the project's own replays of the shared traces:
// `arbiter replay` (internal/replay, spot capacity traces at a fixed replica target) and
// `arbiter replay --serving` (internal/serving, token demand on several GPU types), run in
// process. What they held is recorded as the live system records it (replica.state events on an
// embedded bus, the recorder, the embedded store) and read back with the anomaly watcher's reader,
// tick by tick, summed into 5-minute steps per workload × location × GPU type × market. The
// anomaly detector's benchmark and the forecast's backtest read them.
// Everything here is deterministic: the replays are seeded and their inputs are files.
package costseries

import (
	"fmt"
	"time"
)

// Step is the series' resolution: the recorder's rollups allow 5 minutes.
const Step = 5 * time.Minute

// Epoch is the wall time of every replay's first tick. The shared traces carry no dates, so all
// series start on the same Monday at 00:00 UTC, and day-of-week seasons line up across series.
var Epoch = time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC)

// Market names, as events.Market writes them.
const (
	Spot     = "spot"
	OnDemand = "on_demand"
)

// Key is what one series measures: one workload's spend in one location, GPU type and market.
type Key struct {
	Workload string
	Location string
	GPUType  string
	Market   string
}

// String is the key as the cost.anomaly event's series names it: its dimensions in a fixed
// order, "workload=w,location=l,gpu_model=g,market=m".
func (k Key) String() string {
	return "workload=" + k.Workload + ",location=" + k.Location + ",gpu_model=" + k.GPUType + ",market=" + k.Market
}

// Series is one key's spend at Step resolution from Start. Every slice has one value per step.
type Series struct {
	Key   Key
	Start time.Time
	// USDPerHour[i] is the mean spend rate during step i (launching instances are billed).
	USDPerHour []float64
	// GPUs[i] is the mean number of GPUs held during step i.
	GPUs []float64
	// Tokens[i] is the output tokens served during step i; nil where the replay has no tokens
	// (the replica replay serves a fixed target, not tokens).
	Tokens []float64
}

// Len is the number of steps.
func (s *Series) Len() int { return len(s.USDPerHour) }

// At is the start of step i.
func (s *Series) At(i int) time.Time { return s.Start.Add(time.Duration(i) * Step) }

// Weeks is the span the series covers, in weeks.
func (s *Series) Weeks() float64 {
	return float64(s.Len()) * Step.Hours() / (7 * 24)
}

// SpendUSD is what the series spent in all.
func (s *Series) SpendUSD() float64 {
	sum := 0.0
	for _, v := range s.USDPerHour {
		sum += v * Step.Hours()
	}
	return sum
}

// TotalWeeks is how many series-weeks a set of series covers.
func TotalWeeks(ss []Series) float64 {
	w := 0.0
	for i := range ss {
		w += ss[i].Weeks()
	}
	return w
}

// accumulator sums per-tick values of one key into steps of ticksPerStep ticks.
type accumulator struct {
	key                  Key
	ticksPerStep         int
	usd, gpus, tokens    []float64
	withTokens, anySpend bool
}

func newAccumulator(key Key, ticks, ticksPerStep int, withTokens bool) *accumulator {
	n := ticks / ticksPerStep // a last partial step is left out: its mean would be biased
	a := &accumulator{key: key, ticksPerStep: ticksPerStep, withTokens: withTokens,
		usd: make([]float64, n), gpus: make([]float64, n)}
	if withTokens {
		a.tokens = make([]float64, n)
	}
	return a
}

// add records tick t: a spend rate in $/h, GPUs held and tokens served during the tick.
func (a *accumulator) add(t int, usdPerHour, gpus, tokens float64) {
	i := t / a.ticksPerStep
	if i >= len(a.usd) {
		return
	}
	k := float64(a.ticksPerStep)
	a.usd[i] += usdPerHour / k
	a.gpus[i] += gpus / k
	if a.withTokens {
		a.tokens[i] += tokens
	}
	a.anySpend = a.anySpend || usdPerHour > 0
}

func (a *accumulator) series() Series {
	return Series{Key: a.key, Start: Epoch, USDPerHour: a.usd, GPUs: a.gpus, Tokens: a.tokens}
}

// ticksPerStep checks that a tick divides the step.
func ticksPerStep(tick time.Duration) (int, error) {
	if tick <= 0 || Step%tick != 0 {
		return 0, fmt.Errorf("a %s tick does not divide the %s step", tick, Step)
	}
	return int(Step / tick), nil
}
