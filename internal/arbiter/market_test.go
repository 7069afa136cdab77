package arbiter

import (
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/events"
)

// A replica.state read back from the bus can arrive after a newer report the leader folded
// directly; it must not turn ready replicas back into launching ones.
func TestOlderReportDoesNotUndoNewer(t *testing.T) {
	m := newMarket(nil)
	g := actuate.Group{Workload: "svc", Location: "a", Market: events.Spot}
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	m.observe([]actuate.Observed{{Group: g, Desired: 2, Ready: 2}}, t0.Add(31*time.Second))
	m.replicaState(&events.ReplicaState{Meta: events.Meta{At: t0}, Workload: "svc", Location: "a",
		Market: events.Spot, Desired: 2, Ready: 0})
	if got := m.observed[g].Ready; got != 2 {
		t.Fatalf("ready = %d after an older report, want 2 (the newer one)", got)
	}
	m.replicaState(&events.ReplicaState{Meta: events.Meta{At: t0.Add(time.Minute)}, Workload: "svc", Location: "a",
		Market: events.Spot, Desired: 2, Ready: 1})
	if got := m.observed[g].Ready; got != 1 {
		t.Fatalf("ready = %d after a newer report, want 1", got)
	}
}

// On a stepped clock the copy of the leader's own report comes back from the bus at the time of
// that report, in the middle of the next round's plan; it carries no pending launches and must
// not hide one that found no capacity.
func TestOwnReportCopyDoesNotHidePending(t *testing.T) {
	m := newMarket(nil)
	g := actuate.Group{Workload: "svc", Location: "a", Market: events.Spot}
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	m.observe([]actuate.Observed{{Group: g, Desired: 3, Ready: 2, Pending: 1, Reason: actuate.ReasonNoCapacity}}, t0)
	m.replicaState(&events.ReplicaState{Meta: events.Meta{At: t0}, Workload: "svc", Location: "a",
		Market: events.Spot, Desired: 3, Ready: 2})
	if got := m.observed[g]; got.Pending != 1 || got.Reason != actuate.ReasonNoCapacity {
		t.Fatalf("after the report's own copy: pending %d (%q), want 1 (%q)", got.Pending, got.Reason, actuate.ReasonNoCapacity)
	}
}

// An instance maps to every group running there. A group that moved off it (its own report no
// longer names it, and another group's does) is dropped; one whose report dropped it with nobody
// taking its place stays, so a notice racing the report (a node draining) still finds it.
func TestInstancesKeepTheirCurrentGroups(t *testing.T) {
	m := newMarket(nil)
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	chat := actuate.Group{Workload: "chat", Location: "a", Market: events.Spot}
	batch := actuate.Group{Workload: "batch", Location: "a", Market: events.Spot}
	groups := func(in string) map[actuate.Group]bool { return m.instance[in] }

	m.observe([]actuate.Observed{{Group: chat, Instances: []string{"i-1"}}, {Group: batch, Instances: []string{"i-1"}}}, t0)
	if g := groups("i-1"); len(g) != 2 {
		t.Fatalf("i-1 runs %v, want chat and batch", g)
	}
	m.observe([]actuate.Observed{{Group: chat, Instances: []string{}}}, t0.Add(time.Minute))
	if g := groups("i-1"); len(g) != 2 {
		t.Fatalf("after chat's report dropped i-1 with nobody new there, i-1 runs %v, want both still", g)
	}
	m.observe([]actuate.Observed{{Group: batch, Instances: []string{"i-1"}}}, t0.Add(2*time.Minute))
	if g := groups("i-1"); len(g) != 1 || !has(g, batch) {
		t.Fatalf("i-1 runs %v, want batch alone once it reported again and chat did not", g)
	}
}

func has(m map[actuate.Group]bool, g actuate.Group) bool {
	_, ok := m[g]
	return ok
}
