package bus_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
)

// TestRolesMayPublishOnlyTheirEventsSubjects ties the permissions to the rule of which subjects
// carry which event (events.CheckSubject): the collector may publish on the subjects of its
// event types exactly, report and budget on no event's subject; and each event type's subjects
// are stored by one event stream.
func TestRolesMayPublishOnlyTheirEventsSubjects(t *testing.T) {
	var want []string
	for _, ty := range []events.Type{events.TypePriceObserved, events.TypeCapacityReclaimed, events.TypeGPUSample,
		events.TypeTokensSample, events.TypeJobProgress} {
		want = append(want, events.SubjectPattern(ty))
	}
	var got []string
	for _, p := range bus.Permissions(bus.RoleCollector).Publish.Allow {
		if strings.HasPrefix(p, "bursar.") {
			got = append(got, p)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("the collector may publish events on %v, want %v", got, want)
	}
	for _, role := range []string{bus.RoleReport, bus.RoleBudget} {
		for _, p := range bus.Permissions(role).Publish.Allow {
			for _, ty := range events.Types {
				if server.SubjectsCollide(p, events.SubjectPattern(ty)) {
					t.Errorf("%s may publish %s, a subject of %s", role, p, ty)
				}
			}
		}
	}
	for _, ty := range events.Types {
		var in []string
		for _, st := range bus.Streams(bus.Options{}) {
			if slices.ContainsFunc(st.Subjects, func(s string) bool { return server.SubjectMatchesFilter(events.SubjectPattern(ty), s) }) {
				in = append(in, st.Name)
			}
		}
		if len(in) != 1 || in[0] == bus.DLQ {
			t.Errorf("%s (%s) is stored by %v, want one event stream", ty, events.SubjectPattern(ty), in)
		}
	}
}
