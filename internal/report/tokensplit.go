package report

import (
	"maps"
	"math"
	"slices"
)

// offerDims are the dimensions a token counter does not carry: which provider, market and GPU
// type served a token is estimated from what ran beside it (attribute).
var offerDims = []Dim{Provider, Market, GPU}

// Unattributed names the provider, market and GPU of tokens counted in a step in which no
// replica of their workload was seen ready at their location.
const Unattributed = "(unattributed)"

// tokenShare is the part of one step's tokens of a workload at a location that one offer served.
type tokenShare struct {
	Key
	hour             int64
	prompt, gen, req float64
}

// splitsTokens says whether the report needs tokens by offer: grouped or filtered by provider,
// market or GPU.
func splitsTokens(o Options) bool {
	return slices.ContainsFunc(offerDims, func(d Dim) bool { return slices.Contains(o.By, d) || len(o.Filter[d]) > 0 })
}

// withoutOfferFilter is o with the provider, market and GPU filters dropped: tokens are split
// among every offer that ran, and the filter applies to the shares.
func withoutOfferFilter(o Options) Options {
	f := maps.Clone(o.Filter)
	for _, d := range offerDims {
		delete(f, d)
	}
	o.Filter = f
	return o
}

// attribute splits each step's tokens of a workload at a location among the offers that ran it in
// that step, in proportion to what each could serve: its ready replica-hours times rate(workload,
// gpu), the throughput of one replica of that GPU type (all replicas alike where rate knows none). Counters are kept per replica process, not per offer, so this is an estimate:
// exact where one offer ran the step, and where the rates are what the replicas served.
func attribute(toks []tokenUse, us []Usage, rate func(workload, gpu string) float64) []tokenShare {
	type step struct {
		workload, location string
		hour               int64
	}
	ran := map[step][]Usage{}
	for _, u := range us {
		if u.ReplicaHours > 0 {
			k := step{u.Workload, u.Location, u.Hour.Unix()}
			ran[k] = append(ran[k], u)
		}
	}
	weight := func(u Usage) float64 {
		// Replica-hours to the millisecond: the rollup sums them as floats in whatever order its
		// parts merge, and noise below that must not move a token between two runs' shares.
		h := math.Round(u.ReplicaHours*3.6e6) / 3.6e6
		if r := rate(u.Workload, u.GPU); r > 0 {
			return h * r
		}
		return h
	}
	var out []tokenShare
	for _, t := range toks {
		offers := ran[step{t.Workload, t.Location, t.Hour}]
		total := 0.0
		for _, u := range offers {
			total += weight(u)
		}
		if total <= 0 {
			out = append(out, tokenShare{Key: Key{Workload: t.Workload, Location: t.Location, Provider: Unattributed,
				Market: Unattributed, GPU: Unattributed}, hour: t.Hour,
				prompt: float64(t.Prompt), gen: float64(t.Gen), req: float64(t.Requests)})
			continue
		}
		for _, u := range offers {
			f := weight(u) / total
			out = append(out, tokenShare{Key: u.Key, hour: t.Hour,
				prompt: f * float64(t.Prompt), gen: f * float64(t.Gen), req: f * float64(t.Requests)})
		}
	}
	return out
}

// wholeShares are the tokens as counted, by workload and location.
func wholeShares(toks []tokenUse) []tokenShare {
	out := make([]tokenShare, len(toks))
	for i, t := range toks {
		out[i] = tokenShare{Key: Key{Workload: t.Workload, Location: t.Location}, hour: t.Hour,
			prompt: float64(t.Prompt), gen: float64(t.Gen), req: float64(t.Requests)}
	}
	return out
}

// keepOffer says whether a share or a usage row passes the provider, market and GPU filters.
func (f Filter) keepOffer(k Key) bool {
	return f.keep(Provider, k.Provider) && f.keep(Market, k.Market) && f.keep(GPU, k.GPU)
}
