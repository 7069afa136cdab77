package arbiter

import (
	"encoding/hex"
	"hash/fnv"
	"slices"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/placement"
)

// ReasonLaunchFailed is the reason of the action that gives up a launch which could not get
// capacity or was not ready within its location's launch timeout. It is announced as
// action.updated (kind retire), which the recorder keeps with every other action.
const ReasonLaunchFailed = "launch_failed"

// defaultLaunchTimeout is how long a launch may take when its location sets no launch_timeout:
// three cold starts, and at least two minutes more than one.
func defaultLaunchTimeout(coldStart time.Duration) time.Duration {
	return max(3*coldStart, coldStart+2*time.Minute)
}

// launchTimeout is the launch timeout of workload w's replicas at location.
func (s *Service) launchTimeout(location, workload string) time.Duration {
	if l, ok := s.o.Config.Location(location); ok && l.Actuator.LaunchTimeout > 0 {
		return l.Actuator.LaunchTimeout
	}
	cold := time.Duration(0)
	if w, ok := s.o.Config.Workload(workload); ok {
		cold = w.ColdStart
	}
	return defaultLaunchTimeout(cold)
}

// giveUp drops the launching replicas that will not come: those the actuator reports pending for
// want of capacity (the newest of their group), and those not ready within their launch timeout.
// Each one leaves the book, is recorded as a launch_failed observation of its offer (the planner's
// hazard and ranking learn from it) and gets an action lowering its group's count, so the
// next plan places the replica elsewhere at once and nothing stays launching. s.mu is held.
func (s *Service) giveUp(now time.Time, dirty map[string]bool) {
	pending := s.pendingForCapacity()
	for _, w := range sortedKeys(s.books) {
		b := s.books[w]
		for _, g := range groupsOf(b) {
			p := pending[g]
			for _, i := range s.stuck(b, g, p.n, p.at, now) {
				s.abandon(b, i, now)
				dirty[w] = true
			}
			b.Replicas = slices.DeleteFunc(b.Replicas, func(r Rep) bool { return r.State == abandoned })
		}
	}
}

// abandoned marks, within giveUp, a replica being dropped from its book.
const abandoned placement.ReplicaState = "abandoned"

type pendingReport struct {
	n  int
	at time.Time
}

// pendingForCapacity is, per group, how many replicas the actuator last reported pending for
// want of capacity, and when.
func (s *Service) pendingForCapacity() map[actuate.Group]pendingReport {
	s.mk.mu.Lock()
	defer s.mk.mu.Unlock()
	out := map[actuate.Group]pendingReport{}
	for g, o := range s.mk.observed {
		if o.Pending > 0 && o.Reason == actuate.ReasonNoCapacity {
			out[g] = pendingReport{n: o.Pending, at: s.mk.observedAt[g]}
		}
	}
	return out
}

// stuck lists the indices of g's launching replicas to give up: the newest pending ones whose
// launch the actuator had when it reported, and any past its launch timeout. A replica whose
// launch action has not reached the actuator yet is never stuck.
func (s *Service) stuck(b *Book, g actuate.Group, pending int, reportedAt, now time.Time) []int {
	var launching []int
	for i, r := range b.Replicas {
		if r.group(b.Workload) == g && r.State == placement.StateLaunching && !inFlight(b, r.ID) {
			launching = append(launching, i)
		}
	}
	slices.SortStableFunc(launching, func(x, y int) int { return b.Replicas[y].Since.Compare(b.Replicas[x].Since) })
	timeout := s.launchTimeout(g.Location, b.Workload)
	var out []int
	for _, i := range launching {
		r := b.Replicas[i]
		if pending > 0 && r.Since.Before(reportedAt) {
			pending--
			out = append(out, i)
		} else if now.Sub(r.Since) >= timeout {
			out = append(out, i)
		}
	}
	return out
}

// inFlight says whether replica id is launched by an action not finished yet.
func inFlight(b *Book, id string) bool {
	return slices.ContainsFunc(b.Actions, func(rec Record) bool {
		return slices.ContainsFunc(rec.Launch, func(r Rep) bool { return r.ID == id })
	})
}

// abandon gives up b.Replicas[i]: the observation, the action lowering its group and its
// announcement. The replica is marked abandoned; the caller removes it.
func (s *Service) abandon(b *Book, i int, now time.Time) {
	r := &b.Replicas[i]
	r.State = abandoned
	ob := placement.Observation{At: now, Kind: placement.ObsLaunchFailed}
	s.mk.mu.Lock()
	s.mk.history[r.Offer] = append(s.mk.history[r.Offer], ob)
	s.mk.mu.Unlock()
	s.newObs = append(s.newObs, placement.OfferObservation{Offer: r.Offer, Observation: ob})
	g := r.group(b.Workload)
	id := giveUpID(b.Workload, r.ID)
	if b.finished(id) {
		return
	}
	rec := Record{Target: actuate.Target{ActionID: id, Group: g, Offer: r.Offer, Replicas: b.count(g),
		Kind: "retire", Reason: ReasonLaunchFailed}, PlanID: planID(now, b.Workload), Stage: StageRecorded, At: now,
		CostPerHour: -r.PricePerHour}
	b.Actions = append(b.Actions, rec)
	s.m.actions.WithLabelValues("launch", ReasonLaunchFailed).Inc()
	s.announce(rec, b.Workload, statusOf(StageRecorded), "replica "+r.ID+" got no capacity at "+g.Location+
		" (pending, or not ready within "+s.launchTimeout(g.Location, b.Workload).String()+"): given up")
}

func giveUpID(workload, replica string) string {
	h := fnv.New128a()
	h.Write([]byte("give-up\x00" + workload + "\x00" + replica))
	return hex.EncodeToString(h.Sum(nil))
}
