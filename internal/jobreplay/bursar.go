package jobreplay

import (
	"math"
	"time"

	"github.com/bursar-dev/bursar/internal/placement"
)

// bursar-direct asks Bursar's deadline planner (placement.PlanJob) every tick, feeding it only
// what is known by then: availability now and the ticks of the window already seen. It is the
// planner alone, without the live service around it, so its figures are the planner's.
func init() { Register("bursar-direct", newBursarDirect, false) }

// The priors every zone's estimates start from, worth priorSpan of observation: spot there half
// the time, reclaimed once per priorRun of uptime. They are deliberately plain (no trace was
// consulted) and the window's own ticks soon outweigh them.
const (
	priorSpan   = 6 * time.Hour
	priorUptime = 0.5
	priorRun    = 2 * time.Hour
)

// bursarDirect is the policy's state for one window: per-zone availability counts and the
// spells with no spot in any zone.
type bursarDirect struct {
	set    Setting
	zones  []zoneStats
	offers []placement.JobOffer
	// seen is the number of ticks observed; down and up the current run of ticks with no spot
	// anywhere and with some; outages and runs the lengths of such runs seen whole.
	seen, down, up int
	outages, runs  []time.Duration
	keep           float64 // the weight a tick keeps after one more tick: 2^(−tick/memory)
}

// zoneStats counts what one zone's spot did in the ticks seen, each tick weighing less as it
// ages (half as much after memory), so the estimates follow a market that changes its ways.
type zoneStats struct {
	seen, up, reclaims float64 // decayed ticks seen, ticks with spot, reclaims
	wasUp              bool
}

// memory is the half-life of what a zone's estimates remember.
const memory = 6 * time.Hour

func newBursarDirect(env Env) (Policy, error) {
	p := &bursarDirect{set: env.Setting, zones: make([]zoneStats, len(env.Zones)),
		keep: math.Exp2(-float64(env.Setting.Tick) / memory.Seconds())}
	p.offers = make([]placement.JobOffer, 1+len(env.Zones))
	p.offers[0] = placement.JobOffer{Location: "on-demand", Market: placement.MarketOnDemand,
		PricePerHour: env.Setting.ODPrice, Available: true, Uptime: 1}
	for z, name := range env.Zones {
		p.offers[1+z] = placement.JobOffer{Location: name, Market: placement.MarketSpot, PricePerHour: env.Setting.SpotPrice}
	}
	return p, nil
}

func (p *bursarDirect) Decide(v *View) Choice {
	outage := p.observe(v.Spot)
	view := placement.JobView{
		Work: seconds(v.Work), Done: seconds(v.Done), Elapsed: seconds(v.T), Deadline: seconds(v.Deadline),
		Overhead: seconds(v.Overhead), Tick: seconds(v.Tick),
		Running: offerIndex(v.Running), Last: offerIndex(v.Prev),
		Preempted: v.Prev.Kind == Spot && v.Running.Kind == None,
		Outage:    outage, Outages: p.outages, History: seconds(int64(p.seen) * v.Tick),
		SpotFor: p.spotFor(), SpotRuns: p.runs,
	}
	if v.Running.Kind != None {
		view.Pending = seconds(v.Pending)
	}
	return choiceOf(placement.PlanJob(view, p.offers))
}

// observe counts one more tick of availability and refreshes the offers' estimates; it returns
// how long no zone has had spot (0 when one has).
func (p *bursarDirect) observe(spot []bool) time.Duration {
	p.seen++
	any := false
	tick := seconds(p.set.Tick)
	for z, up := range spot {
		st := &p.zones[z]
		st.seen, st.up, st.reclaims = st.seen*p.keep+1, st.up*p.keep, st.reclaims*p.keep
		if up {
			st.up++
			any = true
		} else if st.wasUp {
			st.reclaims++
		}
		st.wasUp = up
		p.offers[1+z].Available = up
		p.offers[1+z].Uptime, p.offers[1+z].Hazard = st.estimates(tick)
	}
	if any {
		if p.down > 0 {
			p.outages = append(p.outages, time.Duration(p.down)*tick)
		}
		p.down = 0
		p.up++
		return 0
	}
	if p.up > 0 {
		p.runs = append(p.runs, time.Duration(p.up)*tick)
	}
	p.up = 0
	p.down++
	return time.Duration(p.down-1) * tick
}

// spotFor is how long some zone has had spot without a break, as of this tick (0 when none).
func (p *bursarDirect) spotFor() time.Duration {
	return time.Duration(max(p.up-1, 0)) * seconds(p.set.Tick)
}

// estimates are a zone's uptime share and reclaims per hour of uptime, the priors included.
func (st *zoneStats) estimates(tick time.Duration) (uptime, hazard float64) {
	span := st.seen * tick.Hours()
	upHours := st.up*tick.Hours() + priorUptime*priorSpan.Hours()
	uptime = upHours / (span + priorSpan.Hours())
	reclaims := st.reclaims + priorUptime*priorSpan.Hours()/priorRun.Hours()
	return uptime, reclaims / upHours
}

// offerIndex is where a choice sits in the planner's offers: on-demand first, then the zones.
func offerIndex(c Choice) int {
	switch c.Kind {
	case OnDemand:
		return 0
	case Spot:
		return 1 + c.Zone
	}
	return -1
}

// choiceOf turns the planner's answer back into a choice.
func choiceOf(i int) Choice {
	switch {
	case i == 0:
		return OD
	case i > 0:
		return SpotIn(i - 1)
	}
	return Idle
}

func seconds(s int64) time.Duration { return time.Duration(s) * time.Second }
