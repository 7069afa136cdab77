package placement_test

import (
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/bursar-dev/bursar/internal/placement"
)

// jobRun is one job run tick by tick under JOBS.md's rules, with PlanJob deciding every tick.
// offers[0] is on-demand; offers[i>0] are spot, up in tick k when up[i-1] says so.
type jobRun struct {
	work, deadline, overhead, tick time.Duration
	offers                         []placement.JobOffer
	up                             []func(k int) bool
	// step4 applies JOBS.md's step 4 on top of the planner (with its quirk: a spot instance
	// reclaimed this tick with no overhead left asks for spot again and idles a tick).
	step4 bool
}

// finish runs the job to its end and returns when it ended (false when it never did).
func (j jobRun) finish() (time.Duration, bool) {
	cur, prev, r, done := -1, -1, time.Duration(0), time.Duration(0)
	var h marketSeen
	for k := 0; k < 1<<20; k++ {
		t := time.Duration(k) * j.tick
		preempted := cur > 0 && !j.up[cur-1](k)
		if preempted {
			cur = -1
		}
		if prev >= 0 {
			burn := min(j.tick, r)
			w := min(j.tick-burn, j.work-done)
			r -= burn
			done += w
			if done >= j.work {
				return t - j.tick + burn + w, true
			}
		}
		offers := j.available(k)
		h.observe(offers, j.tick)
		pending := r
		if cur < 0 {
			pending = 0
		}
		v := placement.JobView{Work: j.work, Done: done, Elapsed: t, Deadline: j.deadline,
			Overhead: j.overhead, Pending: pending, Tick: j.tick, Running: cur, Preempted: preempted, Last: prev,
			Outage: h.outage, Outages: h.outages, SpotFor: h.spotFor, SpotRuns: h.runs, History: h.history}
		req := placement.PlanJob(v, offers)
		if j.step4 && ceilDiv(j.work-done+j.overhead, j.tick) >= int64((j.deadline-t)/j.tick) {
			req = 0
			if prev > 0 && r == 0 {
				req = prev
			}
		}
		if req >= 0 && !offers[req].Available {
			req = -1
		}
		if req >= 0 && req != cur {
			r = j.overhead
		}
		cur, prev = req, req
	}
	return 0, false
}

// marketSeen is the history a job has seen: spells with no spot anywhere and runs with some.
type marketSeen struct {
	outage, spotFor, history time.Duration
	outages, runs            []time.Duration
	down, up                 int
}

// observe adds one tick of the offers' availability.
func (h *marketSeen) observe(offers []placement.JobOffer, tick time.Duration) {
	h.history += tick
	for _, o := range offers[1:] {
		if o.Available {
			if h.down > 0 {
				h.outages = append(h.outages, time.Duration(h.down)*tick)
			}
			h.down, h.outage = 0, 0
			h.spotFor = time.Duration(h.up) * tick
			h.up++
			return
		}
	}
	if h.up > 0 {
		h.runs = append(h.runs, time.Duration(h.up)*tick)
	}
	h.up, h.spotFor = 0, 0
	h.outage = time.Duration(h.down) * tick
	h.down++
}

// available is the offers as they stand in tick k.
func (j jobRun) available(k int) []placement.JobOffer {
	offers := append([]placement.JobOffer(nil), j.offers...)
	for i := 1; i < len(offers); i++ {
		offers[i].Available = j.up[i-1](k)
	}
	return offers
}

func ceilDiv(x, g time.Duration) int64 { return int64((x + g - 1) / g) }

// drawRuns draws a spot trace as alternating runs of up and down ticks, repeated.
func drawRuns(t *rapid.T, label string) func(k int) bool {
	runs := rapid.SliceOfN(rapid.IntRange(1, 60), 1, 12).Draw(t, label)
	firstUp := rapid.Bool().Draw(t, label+"-up")
	total := 0
	for _, n := range runs {
		total += n
	}
	return func(k int) bool {
		k %= total
		up := firstUp
		for _, n := range runs {
			if k < n {
				return up
			}
			k -= n
			up = !up
		}
		return up
	}
}

// TestPlanJobMeetsDeadlines: on random spot traces, works, deadlines, overheads and ticks where
// on-demand alone would finish in time, a job PlanJob steers always finishes by its deadline,
// whether or not the simulator adds JOBS.md's step 4 on top.
func TestPlanJobMeetsDeadlines(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tick := time.Duration(rapid.IntRange(30, 1200).Draw(t, "tick_s")) * time.Second
		work := time.Duration(rapid.IntRange(1, 600).Draw(t, "work_ticks"))*tick +
			time.Duration(rapid.IntRange(0, int(tick/time.Second)).Draw(t, "work_extra_s"))*time.Second
		overhead := time.Duration(rapid.IntRange(0, 4*int(tick/time.Second)).Draw(t, "overhead_s")) * time.Second
		slack := time.Duration(rapid.IntRange(0, int(work/time.Second)).Draw(t, "slack_s")) * time.Second
		j := jobRun{work: work, overhead: overhead, tick: tick, deadline: work + overhead + slack,
			step4: rapid.Bool().Draw(t, "step4")}
		j.offers = []placement.JobOffer{{Location: "a", Market: placement.MarketOnDemand, PricePerHour: 3.06, Available: true, Uptime: 1}}
		for i, n := 0, rapid.IntRange(1, 3).Draw(t, "zones"); i < n; i++ {
			j.offers = append(j.offers, placement.JobOffer{Location: string(rune('b' + i)), Market: placement.MarketSpot,
				PricePerHour: float64(rapid.IntRange(50, 200).Draw(t, "spot_cents")) / 100,
				Hazard:       float64(rapid.IntRange(0, 300).Draw(t, "hazard_pct")) / 100,
				Uptime:       float64(rapid.IntRange(0, 100).Draw(t, "uptime_pct")) / 100})
			j.up = append(j.up, drawRuns(t, "runs"))
		}
		end, ok := j.finish()
		if !ok || end > j.deadline {
			t.Fatalf("job of %v due at %v (overhead %v, tick %v) ended at %v (finished %v)",
				work, j.deadline, overhead, tick, end, ok)
		}
	})
}
