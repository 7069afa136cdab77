package events_test

import (
	"errors"
	"testing"

	"github.com/bursar-dev/bursar/internal/events"
)

func TestJobSubjects(t *testing.T) {
	tests := []struct {
		name string
		e    events.Event
		want string
	}{
		{"progress", &events.JobProgress{Job: "ft-1"}, "bursar.job.progress.ft-1"},
		{"state", &events.JobState{Job: "ft-1"}, "bursar.job.state.ft-1"},
		{"a dotted name is one token", &events.JobState{Job: "llama.70b ft"}, "bursar.job.state.llama_70b_ft"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.e.Subject(); got != tt.want {
				t.Errorf("Subject() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestDecodeRejectsBadJobs lists malformed job events: each is refused by Decode with the field
// named, and by the type's JSON Schema, so producers outside Go are held to the same rules.
func TestDecodeRejectsBadJobs(t *testing.T) {
	set := func(k string, v any) func(map[string]any) { return func(m map[string]any) { m[k] = v } }
	del := func(k string) func(map[string]any) { return func(m map[string]any) { delete(m, k) } }
	both := func(fs ...func(map[string]any)) func(map[string]any) {
		return func(m map[string]any) {
			for _, f := range fs {
				f(m)
			}
		}
	}
	tests := []struct {
		name      string
		typ       events.Type
		change    func(map[string]any)
		wantErr   error
		wantField string
		goOnly    bool // a rule the schema does not state (across fields, or a zero time)
	}{
		{"progress without job", events.TypeJobProgress, del("job"), events.ErrMissingField, "job", false},
		{"progress with empty job", events.TypeJobProgress, set("job", ""), events.ErrMissingField, "job", false},
		{"negative work done", events.TypeJobProgress, set("work_done_s", -1), events.ErrOutOfRange, "work_done_s", false},
		{"work done is a string", events.TypeJobProgress, set("work_done_s", "10"), events.ErrMalformed, "work_done_s", false},
		{"checkpoint after the event", events.TypeJobProgress, set("checkpoint_at", "2026-11-30T07:00:00Z"), events.ErrOutOfRange, "checkpoint_at", true},
		{"checkpoint not in UTC", events.TypeJobProgress, set("checkpoint_at", "2026-11-30T06:00:00+01:00"), events.ErrOutOfRange, "checkpoint_at", false},
		{"zero checkpoint", events.TypeJobProgress, set("checkpoint_at", "0001-01-01T00:00:00Z"), events.ErrMissingField, "checkpoint_at", true},
		{"progress without location", events.TypeJobProgress, del("location"), events.ErrMissingField, "location", false},
		{"progress on a bad market", events.TypeJobProgress, set("market", "grey"), events.ErrOutOfRange, "market", false},
		{"unknown state", events.TypeJobState, set("state", "sleeping"), events.ErrOutOfRange, "state", false},
		{"no work", events.TypeJobState, set("work_s", 0), events.ErrOutOfRange, "work_s", false},
		{"more done than the work", events.TypeJobState, set("work_done_s", 48*3600+1), events.ErrOutOfRange, "work_done_s", true},
		{"no deadline", events.TypeJobState, del("deadline"), events.ErrMissingField, "deadline", false},
		{"deadline not a time", events.TypeJobState, set("deadline", "friday"), events.ErrMalformed, "", false},
		{"negative overhead", events.TypeJobState, set("overhead_s", -180), events.ErrOutOfRange, "overhead_s", false},
		{"running nowhere", events.TypeJobState, del("location"), events.ErrMissingField, "location", false},
		{"running on no market", events.TypeJobState, del("market"), events.ErrMissingField, "market", false},
		{"waiting on a bad market", events.TypeJobState, both(set("state", "waiting"), set("market", "grey")), events.ErrOutOfRange, "market", false},
		{"negative gpus", events.TypeJobState, set("gpus_per_replica", -1), events.ErrOutOfRange, "gpus_per_replica", false},
		{"negative spend", events.TypeJobState, set("usd_spent", -0.01), events.ErrOutOfRange, "usd_spent", false},
		{"negative on-demand price", events.TypeJobState, set("on_demand_usd_per_hour", -3), events.ErrOutOfRange, "on_demand_usd_per_hour", false},
		{"negative preemptions", events.TypeJobState, set("preemptions", -1), events.ErrOutOfRange, "preemptions", false},
		{"fractional preemptions", events.TypeJobState, set("preemptions", 1.5), events.ErrMalformed, "preemptions", false},
		{"negative time lost", events.TypeJobState, set("lost_s", -1), events.ErrOutOfRange, "lost_s", false},
		{"finished without a time", events.TypeJobState, set("state", "finished"), events.ErrMissingField, "finished_at", false},
		{"finished at a local time", events.TypeJobState, both(set("state", "finished"), set("finished_at", "2026-11-30T08:00:00+02:00")), events.ErrOutOfRange, "finished_at", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := mutate(t, tt.typ, tt.change)
			_, err := events.Decode(data)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Decode error = %v, want %v", err, tt.wantErr)
			}
			var ee *events.Error
			if !errors.As(err, &ee) || ee.Field != tt.wantField {
				t.Errorf("error %v names field %q, want %q", err, ee.Field, tt.wantField)
			}
			s, _ := loadSchema(t, tt.typ)
			if !tt.goOnly && validateJSON(t, s, data) == nil {
				t.Errorf("the schema accepted %s", data)
			}
		})
	}
}

// TestJobSchemaAcceptsWhatDecodeAccepts: the schema's conditional rules do not refuse valid
// events: a waiting job with no place, a finished one with its time.
func TestJobSchemaAcceptsWhatDecodeAccepts(t *testing.T) {
	s, _ := loadSchema(t, events.TypeJobState)
	for name, change := range map[string]func(map[string]any){
		"waiting nowhere": func(m map[string]any) {
			m["state"] = "waiting"
			delete(m, "location")
			delete(m, "market")
		},
		"finished": func(m map[string]any) {
			m["state"], m["finished_at"] = "finished", "2026-11-30T05:00:00Z"
		},
	} {
		t.Run(name, func(t *testing.T) {
			data := mutate(t, events.TypeJobState, change)
			if _, err := events.Decode(data); err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if err := validateJSON(t, s, data); err != nil {
				t.Errorf("the schema refused %s: %v", data, err)
			}
		})
	}
}
