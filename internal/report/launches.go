package report

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// launch is one applied action (a launch, or an action that changes a launch's fate) and, for a
// launch, how long its first replica took to be ready.
type launch struct {
	Workload   string `json:"workload"`
	ActionID   string `json:"action_id"`
	Kind       string `json:"kind"`
	Location   string `json:"location"`
	Market     string `json:"market"`
	Offer      string `json:"offer"`
	Replicas   int64  `json:"replicas"`
	ProposedMS int64  `json:"proposed_ms"`
	ApprovedMS int64  `json:"approved_ms"`
	provider   string
	gpu        string
	toReady    time.Duration
}

func (l launch) value(col string, o Options) string {
	switch col {
	case "provider":
		return l.provider
	case "location":
		return l.Location
	case "region":
		return o.region(l.Location)
	case "gpu":
		return l.gpu
	case "workload":
		return l.Workload
	case "market":
		return l.Market
	}
	return ""
}

// firstGPUs returns the launches requested in the window whose replicas became ready before
// end, each with its time to first GPU: from the capacity request (the launch proposed, or
// approved where it waited for approval) to the first replica ready, that is the first report
// of the launch's group (workload, location, market) in replica.state at or after the request
// with more replicas ready than the report before it. Launches withdrawn before any replica
// came (see answered) are left out.
func firstGPUs(ctx context.Context, q Querier, o Options, end time.Time, groups map[fleetGroup][]groupState) ([]launch, error) {
	acts, err := queryRows[launch](ctx, q, fmt.Sprintf(`SELECT workload, action_id, any(kind) AS kind,
		any(location) AS location, any(market) AS market, any(offer) AS offer, max(replicas) AS replicas,
		toUnixTimestamp64Milli(minIf(at, status = 'proposed')) AS proposed_ms,
		toUnixTimestamp64Milli(maxIf(at, status = 'approved')) AS approved_ms
		FROM %s WHERE at >= %s AND at < %s
		GROUP BY workload, action_id HAVING countIf(status = 'applied') > 0 AND countIf(status = 'proposed') > 0`,
		q.Table("action_updated"), ms64(o.Window.Since), ms64(end)))
	if err != nil {
		return nil, fmt.Errorf("reading actions: %w", err)
	}
	slices.SortFunc(acts, func(a, b launch) int {
		return cmp.Or(cmp.Compare(a.asked(), b.asked()), cmp.Compare(a.ActionID, b.ActionID))
	})
	byG := map[fleetGroup][]launch{}
	for _, a := range acts {
		g := fleetGroup{a.Workload, a.Location, a.Market}
		byG[g] = append(byG[g], a)
	}
	var out []launch
	for g, as := range byG {
		for _, l := range answered(as, groups[g]) {
			if l.asked() >= o.Window.Until.UnixMilli() {
				continue
			}
			s, _ := stateAt(groups[g], l.asked()+l.toReady.Milliseconds())
			l.provider, l.gpu = s.Provider, launchGPU(s, l.Offer)
			if l.provider == "" {
				l.provider = o.provider(l.Location)
			}
			if o.Filter.keep(Workload, l.Workload) && o.Filter.keep(Location, l.Location) && o.Filter.keep(Provider, l.provider) &&
				o.Filter.keep(Region, o.region(l.Location)) && o.Filter.keep(Market, l.Market) && o.Filter.keep(GPU, l.gpu) {
				out = append(out, l)
			}
		}
	}
	slices.SortFunc(out, func(a, b launch) int {
		return cmp.Or(cmp.Compare(a.asked(), b.asked()), cmp.Compare(a.ActionID, b.ActionID))
	})
	return out, nil
}

// answered walks one group's actions (in request order) and its reports: a launch waits for
// capacity; the group's next arrival of ready replicas answers every launch waiting; a drain or
// scale-down to no more than what is ready withdraws them. A retire (a reclaimed replica is
// gone) leaves them waiting. A launch waits even when its target looks ready already: a
// replica under notice is still reported ready until it goes.
func answered(acts []launch, states []groupState) []launch {
	as := arrivals(states)
	var waiting, out []launch
	next := 0
	for i := 0; i <= len(acts); i++ {
		until := int64(math.MaxInt64)
		if i < len(acts) {
			until = acts[i].asked()
		}
		for ; next < len(as) && as[next].AtMS < until; next++ {
			for _, w := range waiting {
				w.toReady = time.Duration(as[next].AtMS-w.asked()) * time.Millisecond
				out = append(out, w)
			}
			waiting = nil
		}
		if i == len(acts) {
			break
		}
		a := acts[i]
		ready := int64(0)
		if s, ok := stateAt(states, a.asked()); ok {
			ready = s.Ready
		}
		switch {
		case a.Kind == "launch":
			waiting = append(waiting, a)
		case (a.Kind == "drain" || a.Kind == "scale") && a.Replicas <= ready:
			waiting = nil
		}
	}
	return out
}

// launchGPU is the GPU model of the launched offer in a group's state, or of whatever the group
// ran when the launch named no offer.
func launchGPU(s groupState, offer string) string {
	var gpus []string
	for i, of := range s.Offers {
		if offer == "" || of == offer {
			gpus = append(gpus, s.GPUs[i])
		}
	}
	g := strings.Join(uniq(gpus), "+")
	if g == "" {
		return Unknown
	}
	return g
}

// firstGPUNotes gives per provider the average time to first GPU over every launch.
func firstGPUNotes(ls []launch) []string {
	sum, n := map[string]time.Duration{}, map[string]int{}
	for _, l := range ls {
		p := l.provider
		if p == "" {
			p = l.Location
		}
		sum[p] += l.toReady
		n[p]++
	}
	var out []string
	for _, p := range sortedKeys(n) {
		out = append(out, fmt.Sprintf("time to first GPU at %s: %.1f s on average over %d launches (capacity request to replica ready)", p,
			sum[p].Seconds()/float64(n[p]), n[p]))
	}
	return out
}

// asked is when the action's capacity was requested: when it was proposed, or approved if it
// waited for approval.
func (l launch) asked() int64 { return max(l.ProposedMS, l.ApprovedMS) }
