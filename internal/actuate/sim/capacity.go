package sim

import (
	"slices"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/events"
)

// Trace is spot capacity over time in the replay zone format: Counts[location][i] is how many spot
// instances the location holds during [Start+i·Tick, Start+(i+1)·Tick). Before Start the first
// count holds, after the end the last one.
type Trace struct {
	Start  time.Time
	Tick   time.Duration
	Counts map[string][]int
}

// capacity is the market the fleet runs on: each limited location's spot capacity now, the trace
// it follows (if any), each provider's reclaim notice, and the notices of capacity losses not yet
// handed out.
type capacity struct {
	limit   map[string]int
	trace   *Trace
	all     *time.Duration // one notice for every location, overriding the providers'
	pending []*events.CapacityReclaimed
}

func newCapacity() capacity {
	return capacity{limit: map[string]int{}}
}

// providerNotice is how long before a reclaim each provider warns (AWS: 2 minutes; GCP and Azure:
// 30 s); other providers are taken as AWS.
var providerNotice = map[string]time.Duration{"aws": 2 * time.Minute, "gcp": 30 * time.Second, "azure": 30 * time.Second}

// follow sets each traced location's capacity from the trace at now.
func (c *capacity) follow(now time.Time) {
	if c.trace == nil || c.trace.Tick <= 0 {
		return
	}
	i := int(now.Sub(c.trace.Start) / c.trace.Tick)
	for loc, counts := range c.trace.Counts {
		if len(counts) > 0 {
			c.limit[loc] = counts[min(max(i, 0), len(counts)-1)]
		}
	}
}

// SetCapacity limits location's spot capacity to n instances from now on (scripted capacity, for
// tests and the replay); a drop below what runs reclaims at once, with notice.
func (f *Fleet) SetCapacity(location string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.market.limit[location] = max(n, 0)
	f.step(f.now())
}

// UseTrace makes the fleet follow tr's spot capacity as its clock advances.
func (f *Fleet) UseTrace(tr Trace) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.market.trace = &tr
	f.step(f.now())
}

// SetNotice sets the reclaim notice at every location (0: reclaimed instances go at once, as in
// the replay's rules); without it each location gets its provider's.
func (f *Fleet) SetNotice(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.market.all = &d
}

func (f *Fleet) noticeAt(location string) time.Duration {
	if f.market.all != nil {
		return *f.market.all
	}
	if l, ok := f.cfg.Location(location); ok {
		if d, known := providerNotice[l.Provider]; known {
			return d
		}
	}
	return 2 * time.Minute
}

// spotAt lists the spot instances at location not yet reclaimed, by group and index, oldest first.
func (f *Fleet) spotAt(location string) []spotInst {
	var out []spotInst
	for k, g := range f.groups {
		if k.Location != location || k.Market != events.Spot {
			continue
		}
		for _, i := range g.insts {
			if _, dying := g.dying[i]; !dying {
				out = append(out, spotInst{k, i})
			}
		}
	}
	slices.SortFunc(out, func(a, b spotInst) int { return a.i - b.i })
	return out
}

type spotInst struct {
	k actuate.Group
	i int
}

// clamp reclaims, at every limited location running more spot instances than its capacity, the
// newest first, each with the location's notice (REPLAY.md rule 2).
func (f *Fleet) clamp(now time.Time) {
	for _, loc := range f.limitedLocations() {
		running := f.spotAt(loc)
		for excess := len(running) - f.market.limit[loc]; excess > 0; excess-- {
			in := running[len(running)-excess]
			g := f.groups[in.k]
			deadline := now.Add(f.noticeAt(loc))
			f.market.pending = append(f.market.pending, f.notice(in.k, f.life[in.i].Instance, now, deadline))
			g.dying[in.i] = deadline
			if !deadline.After(now) {
				f.ripen(in.k, g, now)
			}
		}
	}
}

func (f *Fleet) limitedLocations() []string {
	locs := make([]string, 0, len(f.market.limit))
	for l := range f.market.limit {
		locs = append(locs, l)
	}
	slices.Sort(locs)
	return locs
}

// room is how many more instances group k may launch now: unlimited off spot and at locations
// with no limit, else the capacity its running spot instances leave.
func (f *Fleet) room(k actuate.Group, _ time.Time) int {
	limit, ok := f.market.limit[k.Location]
	if !ok || k.Market != events.Spot {
		return 1
	}
	return limit - len(f.spotAt(k.Location))
}
