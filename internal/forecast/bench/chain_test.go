package bench

import (
	"math/rand/v2"
	"slices"
	"time"

	"github.com/bursar-dev/bursar/internal/costseries"
)

// The traces are 11 (replica replay) and 14 days (serving replay) long; a month-end backtest
// needs months. So each scope's history is built from its own replay window by a moving-block
// bootstrap (Künsch 1989): week-long blocks, each starting at a whole day of the window drawn at
// random (seeded), laid end to end. A week keeps the daily shape and the multi-day runs of a spot
// market inside a block; the draws make one week differ from the next as the replayed weeks do.
// No value is made up or scaled: every hour is an hour a replay spent. Scopes are not mixed:
// each is one workload (a trace under a policy), or one workload on one market.
const (
	chainDays = 7 * 30 // thirty weeks of history per scope
	blockDays = 7
	chainSeed = 32
)

// scope is one budget scope's hourly spend over the chain, from costseries.Epoch (a Monday).
type scope struct {
	name   string
	spend  []float64 // $ per hour
	blocks int
}

// hourly sums a 5-minute series' $/h into whole hours ($ in each hour).
func hourly(s *costseries.Series) []float64 {
	per := int(time.Hour / costseries.Step)
	out := make([]float64, s.Len()/per)
	for i := range out {
		for _, v := range s.USDPerHour[i*per : (i+1)*per] {
			out[i] += v * costseries.Step.Hours()
		}
	}
	return out
}

// windows groups the series into hourly windows by scope name: a workload, and a workload on
// one market, the series of a scope summed.
func windows(ss []costseries.Series) map[string][]float64 {
	out := map[string][]float64{}
	add := func(name string, h []float64) {
		w := out[name]
		if len(w) < len(h) {
			w = append(w, make([]float64, len(h)-len(w))...)
		}
		for i, x := range h {
			w[i] += x
		}
		out[name] = w
	}
	for i := range ss {
		h := hourly(&ss[i])
		add(ss[i].Key.Workload, h)
		add(ss[i].Key.Workload+"/"+ss[i].Key.Market, h)
	}
	return out
}

// chain builds each scope's history from its window, in a fixed order of scopes.
func chain(ss []costseries.Series) []scope {
	ws := windows(ss)
	names := make([]string, 0, len(ws))
	for n := range ws {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]scope, 0, len(names))
	for i, n := range names {
		w := ws[n]
		days := len(w) / 24
		r := rand.New(rand.NewPCG(chainSeed, uint64(i)))
		sc := scope{name: n}
		for len(sc.spend) < chainDays*24 {
			from := 24 * r.IntN(days-blockDays+1)
			sc.spend = append(sc.spend, w[from:from+24*blockDays]...)
			sc.blocks++
		}
		out = append(out, sc)
	}
	return out
}
