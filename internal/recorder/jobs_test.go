package recorder

import (
	"testing"

	"github.com/bursar-dev/bursar/internal/events"
)

// TestTypeOfSubjects: jobs' subjects name their type in the third token, the others in the
// second; an unknown job subject has no type (its messages go to the DLQ, not to a wrong table).
func TestTypeOfSubjects(t *testing.T) {
	tests := []struct {
		subject string
		want    events.Type
		wantOK  bool
	}{
		{"bursar.job.progress.ft-1", events.TypeJobProgress, true},
		{"bursar.job.state.ft-1", events.TypeJobState, true},
		{"bursar.job.submit.ft-1", "", false},
		{"bursar.job", "", false},
		{"bursar.fleet.llm.aws-use1", events.TypeReplicaState, true},
		{"bursar.budget.p", events.TypeBudgetAlert, true},
		{"other.job.state.x", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.subject, func(t *testing.T) {
			got, ok := events.TypeOfSubject(tt.subject)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("events.TypeOfSubject(%q) = %q, %v; want %q, %v", tt.subject, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
