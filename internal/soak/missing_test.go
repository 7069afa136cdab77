package soak

import (
	"strings"
	"testing"
	"time"
)

// TestAFailureNamesTheMissingEvents: a table short of events names each missing one (id, stream
// sequence, times) and the faults nearest to it, so a loss can be traced; before, it said only
// how many were missing.
func TestAFailureNamesTheMissingEvents(t *testing.T) {
	wall := time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC)
	market := time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)
	published := map[string]origin{
		"a": {id: "a", stream: "FLEET", seq: 7, stored: wall.Add(10 * time.Second), at: market},
		"b": {id: "b", stream: "FLEET", seq: 3, stored: wall.Add(61 * time.Second), at: market.Add(time.Hour)},
		"c": {id: "c", stream: "FLEET", seq: 5, stored: wall, at: market},
		"d": {id: "d", stream: "TELEMETRY"},
	}
	timeline := []event{
		{tick: 10, at: market, wall: wall.Add(9 * time.Second), what: "NATS node n1 stopped"},
		{tick: 90, at: market.Add(2 * time.Hour), wall: wall.Add(60 * time.Second), what: "recorder killed mid-batch"},
		{tick: 200, at: market.Add(5 * time.Hour), wall: wall.Add(300 * time.Second), what: "leader killed"},
	}
	miss := missing(published, map[string]bool{"c": true})
	var ids []string
	for _, o := range miss {
		ids = append(ids, o.id)
	}
	if got := strings.Join(ids, ","); got != "b,a,d" {
		t.Fatalf("missing %s, want b,a,d (in stream order, the recorded one left out)", got)
	}
	got := describeMissing(miss, timeline)
	for _, want := range []string{
		`b (FLEET seq 3, at 2025-01-02T01:00:00Z, stored 06:01:01.000), nearest faults: "recorder killed mid-batch" at 2025-01-02T02:00:00Z (tick 90, 1s before)`,
		`a (FLEET seq 7, at 2025-01-02T00:00:00Z, stored 06:00:10.000), nearest faults: "NATS node n1 stopped" at 2025-01-02T00:00:00Z (tick 10, 1s before)`,
		`d (acked to its publisher; TELEMETRY no longer holds it)`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the failure does not say\n%s\nit says\n%s", want, got)
		}
	}
	if n := strings.Count(got, "(tick "); n != 4 {
		t.Errorf("%d faults named, want the nearest two of each of the two events in the stream: %s", n, got)
	}
}

// TestAFailureNamesAFewMissingEventsAndCountsTheRest keeps a failure readable when thousands
// are missing.
func TestAFailureNamesAFewMissingEventsAndCountsTheRest(t *testing.T) {
	published := map[string]origin{}
	for i := range 20 {
		id := string(rune('a' + i))
		published[id] = origin{id: id, stream: "FLEET", seq: uint64(i + 1)}
	}
	got := describeMissing(missing(published, nil), nil)
	if n := strings.Count(got, "FLEET seq"); n != shownMissing {
		t.Errorf("%d events named, want %d: %s", n, shownMissing, got)
	}
	if !strings.HasSuffix(got, "; and 12 more") {
		t.Errorf("the rest not counted: %s", got)
	}
}
