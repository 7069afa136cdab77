package arbiter

import (
	"time"

	"github.com/bursar-dev/bursar/internal/placement"
)

// responder keeps the planner the last full pass made, and what it knows of the books' replicas,
// so that a reclaim is answered by re-planning only the workloads it touches (answer), not the
// whole estate. The ledger holds it; it is used under the books' lock.
type responder struct {
	planner *placement.Planner
	// known is what planner knows of the books' replicas; newObs the observations (reclaims,
	// replicas ended) it has not been told of.
	known  map[string]placement.Replica
	newObs []placement.OfferObservation
	// targets are the ready replicas each workload needed when planner was made (restoring): its
	// demand in replicas, or for one sized by throughput the replicas chosen to cover its rate.
	targets map[string]int
}

// keep keeps pl, planned from the books' replicas reps and the workloads ws, to answer the next
// reclaims.
func (r *responder) keep(pl *placement.Planner, reps []placement.Replica, ws []placement.Workload) {
	r.planner = pl
	r.targets = make(map[string]int, len(ws))
	for i := range ws {
		r.targets[ws[i].ID], _ = pl.Target(ws[i].ID)
	}
	r.known = make(map[string]placement.Replica, len(reps))
	for _, p := range reps {
		r.known[p.ID] = p
	}
	r.newObs = r.newObs[:0]
}

// forget drops the planner: the books it knew are no longer this arbiter's.
func (r *responder) forget() { r.planner = nil }

// observe tells the next answer what was observed of offer.
func (r *responder) observe(offer string, ob placement.Observation) {
	r.newObs = append(r.newObs, placement.OfferObservation{Offer: offer, Observation: ob})
}

// target is the ready replicas workload w needed when the planner was made.
func (r *responder) target(w string) (int, bool) {
	n, ok := r.targets[w]
	return n, ok
}

// ready says whether there is a planner to answer from: none before the first full pass of a lead.
func (r *responder) ready() bool { return r.planner != nil }

// answer re-plans what changed in books (jobs left out: isJob) since the planner last saw them;
// there must be a planner (ready).
func (r *responder) answer(books map[string]*Book, isJob func(string) bool, now time.Time) placement.Decision {
	d := r.planner.Apply(r.update(books, isJob), now)
	r.newObs = r.newObs[:0]
	return d
}

// gone marks, for the planner, a replica the books no longer hold.
const gone placement.ReplicaState = "gone"

// update is what changed in books since the planner last saw them.
func (r *responder) update(books map[string]*Book, isJob func(string) bool) placement.Update {
	u := placement.Update{Observations: r.newObs}
	seen := make(map[string]bool, len(r.known))
	for w, b := range books {
		if isJob(w) {
			continue // jobs are planned by planJobs
		}
		for _, rep := range b.Replicas {
			pr := placement.Replica{ID: rep.ID, Workload: w, Offer: rep.Offer, State: rep.State, Since: rep.Since, Deadline: rep.Deadline}
			seen[rep.ID] = true
			if old, ok := r.known[rep.ID]; !ok || old != pr {
				u.Replicas = append(u.Replicas, pr)
				r.known[rep.ID] = pr
			}
		}
	}
	for id, p := range r.known {
		if !seen[id] && p.State != gone {
			p.State = gone
			u.Replicas = append(u.Replicas, p)
			r.known[id] = p
		}
	}
	return u
}
