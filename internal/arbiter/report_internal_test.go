package arbiter

import (
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
)

// TestEmptyGroupsAreDueWhenTheyEmptyAndEveryEmptyEvery: one group through a run of reports, each
// row what it reports and whether its state is to be published.
func TestEmptyGroupsAreDueWhenTheyEmptyAndEveryEmptyEvery(t *testing.T) {
	g := actuate.Group{Workload: "chat", Location: "a", Market: "spot"}
	at := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	var e empties
	for _, row := range []struct {
		what  string
		after time.Duration // since the first report
		obs   actuate.Observed
		due   bool
	}{
		{"first report, empty", 0, actuate.Observed{Group: g}, true},
		{"same time again", 0, actuate.Observed{Group: g}, false},
		{"still empty", emptyEvery - time.Second, actuate.Observed{Group: g}, false},
		{"empty for emptyEvery", emptyEvery, actuate.Observed{Group: g}, true},
		{"launching", emptyEvery + time.Minute, actuate.Observed{Group: g, Desired: 1}, true},
		{"launching, same time", emptyEvery + time.Minute, actuate.Observed{Group: g, Desired: 1}, true},
		{"empty again", emptyEvery + 2*time.Minute, actuate.Observed{Group: g}, true},
		{"a clock stepped back", emptyEvery, actuate.Observed{Group: g}, true},
		{"pending only", emptyEvery, actuate.Observed{Group: g, Pending: 1}, true},
		{"empty after pending", emptyEvery, actuate.Observed{Group: g}, true},
		{"an instance draining", emptyEvery, actuate.Observed{Group: g, Instances: []string{"i-1"}}, true},
		{"one starting", emptyEvery, actuate.Observed{Group: g, Starting: []string{"i-2"}}, true},
		{"ready without desired", emptyEvery, actuate.Observed{Group: g, Ready: 1}, true},
		{"emptied at the running state's time", emptyEvery, actuate.Observed{Group: g}, true},
		{"another group's first report", emptyEvery, actuate.Observed{Group: actuate.Group{Workload: "chat", Location: "b", Market: "spot"}}, true},
		{"again at that time", emptyEvery, actuate.Observed{Group: g}, true},
		{"the next report's time", emptyEvery + 15*time.Second, actuate.Observed{Group: g}, true},
		{"the report after", emptyEvery + 30*time.Second, actuate.Observed{Group: g}, false},
	} {
		now := at.Add(row.after)
		got := e.due(row.obs, now)
		if got != row.due {
			t.Errorf("%s: due %v, want %v", row.what, got, row.due)
		}
		if got {
			e.sent(row.obs, now)
		}
	}
}

// TestAnEmptyStateTheBusDidNotTakeIsDueAgain: only a state handed to the bus counts as published
// (one refused, say before the offer's price is known, goes out at the next report).
func TestAnEmptyStateTheBusDidNotTakeIsDueAgain(t *testing.T) {
	var e empties
	o := actuate.Observed{Group: actuate.Group{Workload: "chat", Location: "a", Market: "spot"}}
	at := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	if !e.due(o, at) {
		t.Fatal("a group's first empty state is not due")
	}
	if !e.due(o, at.Add(15*time.Second)) {
		t.Error("an empty state the bus did not take is not due at the next report")
	}
}
