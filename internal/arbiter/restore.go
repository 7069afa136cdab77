package arbiter

import (
	"encoding/hex"
	"hash/fnv"
	"slices"
	"time"

	"github.com/bursar-dev/bursar/internal/placement"
)

// Loss is the capacity a workload lost without anyone deciding it and has not got back: replicas
// reclaimed, launches given up, replicas its actuator no longer holds. Launches that bring the
// workload back toward Had restore it (see restoring): a budget that restores first applies them
// at once and tells its approvers after.
type Loss struct {
	Replicas int       `json:"replicas"`       // how many were lost
	Had      int       `json:"had"`            // the most replicas (launching or ready) it held just before one of them
	Since    time.Time `json:"since"`          // when the first of them was lost
	Last     string    `json:"last,omitempty"` // what the latest was: reclaim, launch_failed or vanished
}

// The kinds of loss.
const (
	lossReclaim  = "reclaim"
	lossVanished = "vanished"
)

// lossMemory is how long a loss not made good still counts: a launch that long after it is
// growth, asked about like any.
const lossMemory = 6 * time.Hour

// live counts b's replicas holding or getting capacity: launching or ready.
func (b *Book) live() int {
	n := 0
	for _, r := range b.Replicas {
		if r.State == placement.StateLaunching || r.State == placement.StateReady {
			n++
		}
	}
	return n
}

// lose records that b loses one of its live replicas, of kind; call it while the replica still
// counts as live.
func (b *Book) lose(kind string, now time.Time) {
	if b.Lost.Replicas == 0 {
		b.Lost.Since = now
	}
	b.Lost.Replicas++
	b.Lost.Had = max(b.Lost.Had, b.live())
	b.Lost.Last = kind
}

// short is how many replicas b is short of what it had before its losses: no more than it lost.
func (b *Book) short() int { return max(0, min(b.Lost.Replicas, b.Lost.Had-b.live())) }

// forgetLosses drops the losses of the books back at what they had, and those older than
// lossMemory.
func (l *ledger) forgetLosses(now time.Time, dirty map[string]bool) {
	for w, b := range l.books {
		if b.Lost.Replicas > 0 && (b.live() >= b.Lost.Had || now.Sub(b.Lost.Since) > lossMemory) {
			b.Lost = Loss{}
			dirty[w] = true
		}
	}
}

// restoring marks the launches of acts that restore capacity their workload lost. While a
// workload is short of what it had (Book.short), its launches for a replacement (reclaim), for
// spot standing in or backing (fallback) and for growth (demand_up, as the planner names a
// replacement it cannot tie to a reclaimed replica) restore, up to the shortfall, and with them
// the spares the planner adds beyond the replicas it is missing (fallbacks backing spot launches
// that may find no capacity, drained once the replicas are ready) unless it is missing more than
// the shortfall: that is growth, which waits as it would, and a spare could end up serving it.
// They count in that order, reclaims first and growth last. Hedges and moves never restore. A
// launch that restores part of its count is split in two, the restoring part under an id of its
// own. It returns the actions, in order, and the ids of those that restore.
func (l *ledger) restoring(acts []placement.Action) ([]placement.Action, map[string]bool) {
	restorable := []placement.Reason{placement.ReasonReclaim, placement.ReasonFallback, placement.ReasonDemandUp}
	launches := map[string]int{}
	for _, a := range acts {
		if a.Kind == placement.ActionLaunch && slices.Contains(restorable, a.Reason) {
			launches[a.Workload] += a.Count
		}
	}
	left := map[string]int{} // by workload: launches that may still restore
	for w, n := range launches {
		b := l.books[w]
		if target, ok := l.resp.target(w); ok && b != nil && b.short() > 0 {
			short, missing, spares := b.short(), max(target-b.live(), 0), 0
			if missing <= short { // no growth: every spare backs the restore
				spares = max(n-missing, 0)
			}
			left[w] = min(n, short+spares)
		}
	}
	if len(left) == 0 {
		return acts, nil
	}
	part := make([]int, len(acts)) // how much of each action's count restores
	for _, r := range restorable {
		for i, a := range acts {
			if a.Kind == placement.ActionLaunch && a.Reason == r && left[a.Workload] > 0 {
				part[i] = min(a.Count, left[a.Workload])
				left[a.Workload] -= part[i]
			}
		}
	}
	out := make([]placement.Action, 0, len(acts)+1)
	ids := map[string]bool{}
	for i, a := range acts {
		if k := part[i]; k > 0 && k < a.Count {
			r := a
			r.ID, r.Count, r.CostPerHour = restoreID(a.ID), k, a.CostPerHour*float64(k)/float64(a.Count)
			a.Count, a.CostPerHour = a.Count-k, a.CostPerHour-r.CostPerHour
			out = append(out, r)
			ids[r.ID] = true
		} else if k > 0 {
			ids[a.ID] = true
		}
		out = append(out, a)
	}
	return out, ids
}

// restoreID names the restoring part of a launch the planner named id.
func restoreID(id string) string {
	h := fnv.New128a()
	h.Write([]byte("restore\x00" + id))
	return hex.EncodeToString(h.Sum(nil))
}
