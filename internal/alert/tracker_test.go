package alert

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/slack"
)

var testThresholds = Thresholds{Prices: 7 * time.Hour, Telemetry: 2 * time.Minute}

// play runs the steps through a fresh tracker and returns every alert, in order.
func play(th Thresholds, steps []step) []slack.Alert {
	tr := NewTracker(th)
	var out []slack.Alert
	for _, s := range steps {
		if s.now != nil {
			out = append(out, tr.Tick(*s.now)...)
			continue
		}
		out = append(out, tr.Observe(s.e)...)
	}
	return out
}

func kinds(as []slack.Alert) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = kindOf(a)
	}
	return out
}

// before is the fleet as the arbiter reports it before the reclaim: llm runs two spot replicas on
// aws-use1, nothing runs yet on the replacement offer.
func before() []step {
	return []step{ev(running("llm", use1, spotA, events.Spot, 2, 0)), ev(running("llm", usc1, a3, events.Spot, 0, 0))}
}

func TestTrackerReclaims(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
		want  []string
	}{
		{"notice, launch, ready", append(before(),
			ev(reclaim("i-1", 10*time.Second, 130*time.Second)), ev(decided("llm", "r1", 1, 12*time.Second)),
			ev(launched("llm", "r1", 1, 13*time.Second)), ev(running("llm", usc1, a3, events.Spot, 0, 30*time.Second)),
			ev(running("llm", usc1, a3, events.Spot, 1, 105*time.Second)), tick(10*time.Minute)),
			[]string{"reclaim_handled"}},
		{"ready reported before the launch's applied step", append(before(),
			ev(reclaim("i-1", 10*time.Second, 130*time.Second)), ev(running("llm", usc1, a3, events.Spot, 1, 60*time.Second)),
			ev(launched("llm", "r1", 1, 13*time.Second)), tick(10*time.Minute)),
			[]string{"reclaim_handled"}},
		{"launch read before the notice (another stream)", append(before(),
			ev(launched("llm", "r1", 1, 13*time.Second)), ev(reclaim("i-1", 10*time.Second, 130*time.Second)),
			ev(running("llm", usc1, a3, events.Spot, 1, 60*time.Second)), tick(10*time.Minute)),
			[]string{"reclaim_handled"}},
		{"on-demand fallback answers too", append(before(),
			ev(reclaim("i-1", 0, 2*time.Minute)),
			ev(action("llm", "f1", "launch", "fallback", a3od, events.OnDemand, 1, events.ActionApplied, 5*time.Second)),
			ev(running("llm", usc1, a3od, events.OnDemand, 1, 50*time.Second))),
			[]string{"reclaim_handled"}},
		{"no replacement by the deadline: one alert", append(before(),
			ev(reclaim("i-1", 0, 2*time.Minute)), tick(time.Minute), tick(2*time.Minute+time.Second),
			tick(3*time.Minute), tick(4*time.Minute)),
			[]string{"reclaim_missed"}},
		{"replacement ready late: missed, then handled", append(before(),
			ev(reclaim("i-1", 0, 2*time.Minute)), ev(launched("llm", "r1", 1, 5*time.Second)),
			tick(3*time.Minute), ev(running("llm", usc1, a3, events.Spot, 1, 4*time.Minute)), tick(5*time.Minute)),
			[]string{"reclaim_missed", "reclaim_handled"}},
		{"a launch for demand does not answer a reclaim", append(before(),
			ev(reclaim("i-1", 0, 2*time.Minute)),
			ev(action("llm", "d1", "launch", "demand_up", a3, events.Spot, 1, events.ActionApplied, 5*time.Second)),
			ev(running("llm", usc1, a3, events.Spot, 1, 50*time.Second)), tick(3*time.Minute)),
			[]string{"reclaim_missed"}},
		{"another workload's replacement does not answer it", append(before(),
			ev(running("batch", usc1, a3, events.Spot, 0, 0)), ev(reclaim("i-1", 0, 2*time.Minute)),
			ev(launched("batch", "b1", 1, 5*time.Second)), ev(running("batch", usc1, a3, events.Spot, 1, 50*time.Second)),
			tick(3*time.Minute)),
			[]string{"reclaim_missed"}},
		{"a notice where the fleet runs nothing is nobody's", []step{
			ev(running("llm", usc1, a3, events.Spot, 2, 0)), ev(reclaim("i-9", 0, 2*time.Minute)), tick(time.Hour)},
			nil},
		{"a group no longer reported runs nothing", append(before(),
			tick(2*time.Hour), ev(reclaim("i-1", 2*time.Hour, 2*time.Hour+2*time.Minute)), tick(3*time.Hour)),
			nil},
		{"the applied step re-sent counts once", append(before(),
			ev(reclaim("i-1", 0, 2*time.Minute)), ev(reclaim("i-2", time.Second, 2*time.Minute)),
			ev(launched("llm", "r1", 1, 5*time.Second)), ev(launched("llm", "r1", 1, 6*time.Second)),
			ev(running("llm", usc1, a3, events.Spot, 1, 50*time.Second)), tick(3*time.Minute)),
			[]string{"reclaim_handled", "reclaim_missed"}},
		{"one launch of two replicas answers two notices", append(before(),
			ev(reclaim("i-1", 0, 2*time.Minute)), ev(reclaim("i-2", time.Second, 2*time.Minute)),
			ev(decided("llm", "r2", 2, 4*time.Second)), ev(launched("llm", "r2", 2, 5*time.Second)),
			ev(running("llm", usc1, a3, events.Spot, 1, 40*time.Second)),
			ev(running("llm", usc1, a3, events.Spot, 2, 50*time.Second)), tick(3*time.Minute)),
			[]string{"reclaim_handled", "reclaim_handled"}},
		{"replaced on the reclaimed group itself, ready once the lost replica is retired", append(before(),
			ev(reclaim("i-1", 0, 2*time.Minute)),
			ev(action("llm", "r1", "launch", "reclaim", spotA, events.Spot, 3, events.ActionApplied, 5*time.Second)),
			ev(running("llm", use1, spotA, events.Spot, 2, 60*time.Second)),
			ev(action("llm", "x1", "retire", "reclaim", spotA, events.Spot, 2, events.ActionApplied, 2*time.Minute)),
			tick(3*time.Minute)),
			[]string{"reclaim_handled"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := kinds(play(testThresholds, tt.steps)); !slices.Equal(got, tt.want) {
				t.Errorf("alerts = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTrackerReclaimHandledSaysWhereWhatAndHowLong(t *testing.T) {
	got := play(testThresholds, append(before(), ev(reclaim("i-0abc", 10*time.Second, 130*time.Second)),
		ev(launched("llm", "r1", 1, 13*time.Second)), ev(running("llm", usc1, a3, events.Spot, 1, 105*time.Second))))
	if len(got) != 1 {
		t.Fatalf("alerts = %v, want one", kinds(got))
	}
	h, ok := got[0].(slack.ReclaimHandled)
	want := slack.ReclaimHandled{Workload: "llm", Provider: "aws", Location: use1, Zone: "us-east-1a", Instance: "i-0abc",
		Kind: events.ReclaimInterruption, NoticeAt: at(10 * time.Second), Deadline: at(130 * time.Second),
		Replacement: a3, ReadyAt: at(105 * time.Second)}
	if !ok || h != want {
		t.Errorf("alert = %+v,\nwant %+v", got[0], want)
	}
}

func TestTrackerMissedNamesTheReplacementNotReady(t *testing.T) {
	got := play(testThresholds, append(before(), ev(reclaim("i-1", 0, 2*time.Minute)),
		ev(launched("llm", "r1", 1, 5*time.Second)), tick(3*time.Minute)))
	m, ok := got[0].(slack.ReclaimMissed)
	if len(got) != 1 || !ok || m.Replacement != a3 || m.Workload != "llm" || m.Instance != "i-1" {
		t.Errorf("alerts = %+v", got)
	}
}

func TestTrackerFailedActions(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
		want  int
	}{
		{"one failure", []step{ev(failed("llm", "a1", 0))}, 1},
		{"the same action failing again (re-sent)", []step{ev(failed("llm", "a1", 0)), ev(failed("llm", "a1", time.Minute))}, 1},
		{"two actions", []step{ev(failed("llm", "a1", 0)), ev(failed("llm", "a2", time.Second))}, 2},
		{"same id, two workloads", []step{ev(failed("llm", "a1", 0)), ev(failed("batch", "a1", time.Second))}, 2},
		{"applied and approved are no failures", []step{ev(launched("llm", "a1", 1, 0)),
			ev(action("llm", "a2", "drain", "demand_down", a3, events.Spot, 0, events.ActionApproved, 0))}, 0},
		{"forgotten after a day, then alerted again", []step{ev(failed("llm", "a1", 0)), tick(25 * time.Hour),
			ev(failed("llm", "a1", 25*time.Hour))}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := play(testThresholds, tt.steps)
			if len(got) != tt.want {
				t.Fatalf("alerts = %v, want %d", kinds(got), tt.want)
			}
			for _, a := range got {
				if _, ok := a.(slack.ActionFailed); !ok || !strings.Contains(a.Text(), "ZONE_RESOURCE_POOL_EXHAUSTED") {
					t.Errorf("alert = %+v", a)
				}
			}
		})
	}
}

func TestTrackerStaleSources(t *testing.T) {
	tests := []struct {
		name  string
		th    Thresholds
		steps []step
		want  []string
	}{
		{"quiet within the threshold", testThresholds, []step{ev(price("aws-spot", "aws", 0)), tick(7 * time.Hour)}, nil},
		{"stale once, back once", testThresholds, []step{ev(price("aws-spot", "aws", 0)),
			tick(7*time.Hour + time.Second), tick(8 * time.Hour), tick(9 * time.Hour),
			ev(price("aws-spot", "aws", 9*time.Hour)), ev(price("aws-spot", "aws", 9*time.Hour+time.Second)),
			tick(9*time.Hour + time.Minute)},
			[]string{"source_stale", "source_back"}},
		{"an old report read late is not a return", testThresholds, []step{ev(price("aws-spot", "aws", time.Hour)),
			tick(9 * time.Hour), ev(price("aws-spot", "aws", 0)), ev(price("aws-spot", "aws", time.Hour))},
			[]string{"source_stale"}},
		{"prices by source and provider", testThresholds, []step{ev(price("aws-spot", "aws", 0)),
			ev(price("skypilot", "aws", 0)), ev(price("skypilot", "gcp", 4*time.Hour)), tick(7*time.Hour + time.Minute)},
			[]string{"source_stale", "source_stale"}},
		{"telemetry by location and kind", testThresholds, []step{ev(gpu(use1, 0)), ev(tokens(use1, 0)), ev(gpu(usc1, 0)),
			ev(gpu(usc1, 90*time.Second)), ev(tokens(use1, 90*time.Second)), tick(2*time.Minute + time.Second),
			ev(gpu(use1, 3*time.Minute))},
			[]string{"source_stale", "source_back"}},
		{"a zero threshold turns the check off", Thresholds{Telemetry: 2 * time.Minute}, []step{
			ev(price("aws-spot", "aws", 0)), ev(gpu(use1, 0)), tick(48 * time.Hour)},
			[]string{"source_stale"}},
		{"a source silent for days is forgotten", testThresholds, []step{ev(gpu(use1, 0)), tick(3 * time.Minute),
			tick(25 * time.Hour), ev(gpu(use1, 26*time.Hour)), tick(26*time.Hour + time.Minute)},
			[]string{"source_stale"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := kinds(play(tt.th, tt.steps)); !slices.Equal(got, tt.want) {
				t.Errorf("alerts = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTrackerStaleNamesTheSource(t *testing.T) {
	got := play(testThresholds, []step{ev(price("aws-spot", "aws", 0)), ev(gpu(use1, 0)), tick(8 * time.Hour),
		ev(price("aws-spot", "aws", 9*time.Hour))})
	var texts []string
	for _, a := range got {
		texts = append(texts, a.Text())
	}
	want := []string{"Source stale: GPU samples from aws-use1 silent for 8h0m0s",
		"Source stale: prices from aws-spot (aws) silent for 8h0m0s",
		"Source back: prices from aws-spot (aws) reports again after 9h0m0s"}
	if !slices.Equal(texts, want) {
		t.Errorf("alerts:\n%s\nwant:\n%s", strings.Join(texts, "\n"), strings.Join(want, "\n"))
	}
}
