package demo

import (
	"slices"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate/sim"
)

// reclaimStat is what happened to one workload's replicas at one location: how many the provider
// reclaimed, how many were replaced, and the summed time from notice to the replacement ready.
type reclaimStat struct {
	reclaims, replaced int
	toReady            time.Duration
}

// wl is a workload and location.
type wl struct{ workload, location string }

// replacements matches each reclaim notice (whether the instance then vanished at its deadline or
// the arbiter drained it first), in notice order, with the first replica of the same
// workload launched after the notice that became ready and replaced no earlier notice. The sim's
// instance histories are the truth here: the history in ClickHouse does not say which workload a
// reclaimed instance ran (capacity.reclaimed names the instance, not the workload).
func replacements(lives []sim.Life, noticed map[string]time.Time) map[wl]*reclaimStat {
	type notice struct {
		at   time.Time
		life sim.Life
	}
	var ns []notice
	for _, l := range lives {
		if at, ok := noticed[l.Instance]; ok {
			ns = append(ns, notice{at, l})
		}
	}
	slices.SortStableFunc(ns, func(a, b notice) int { return a.at.Compare(b.at) })
	used := make([]bool, len(lives))
	out := map[wl]*reclaimStat{}
	for _, n := range ns {
		k := wl{n.life.Group.Workload, n.life.Group.Location}
		st := out[k]
		if st == nil {
			st = &reclaimStat{}
			out[k] = st
		}
		st.reclaims++
		if i := firstReplacement(lives, used, n.life.Group.Workload, n.at); i >= 0 {
			used[i] = true
			st.replaced++
			st.toReady += lives[i].Ready.Sub(n.at)
		}
	}
	return out
}

// firstReplacement is the index of the earliest-ready unused replica of workload launched at or
// after t, or -1.
func firstReplacement(lives []sim.Life, used []bool, workload string, t time.Time) int {
	best := -1
	for i, l := range lives {
		if used[i] || l.Group.Workload != workload || l.Ready.IsZero() || l.Launched.Before(t) {
			continue
		}
		if best < 0 || l.Ready.Before(lives[best].Ready) {
			best = i
		}
	}
	return best
}
