package events

import (
	"errors"
	"fmt"
	"strings"
)

// ErrWrongSubject says an event arrived on a subject its type is not published on: whoever sent
// it there may publish that subject but not that event (docs/security.md, bus.Permissions).
var ErrWrongSubject = errors.New("event on a subject of another type")

// subjectRoots is the one rule of which subjects carry which event type: each type is published
// under its root, and only there (DESIGN.md's subject table). The roles that may publish each
// root are bus.Permissions'; every consumer that acts on events (the recorder, the arbiter)
// checks a message's subject against this table before it takes the event.
var subjectRoots = map[Type]string{
	TypePriceObserved:     "bursar.price",
	TypeCapacityReclaimed: "bursar.reclaim",
	TypeGPUSample:         "bursar.gpu",
	TypeTokensSample:      "bursar.tokens",
	TypeReplicaState:      "bursar.fleet",
	TypePlanDecided:       "bursar.decision",
	TypeActionUpdated:     "bursar.action",
	TypeBudgetAlert:       "bursar.budget",
	TypeJobProgress:       "bursar.job.progress",
	TypeJobState:          "bursar.job.state",
	TypeCostAnomaly:       "bursar.anomaly",
}

// SubjectPattern is the NATS wildcard subject events of type t are published on
// ("bursar.price.>"), or "" for an unknown type.
func SubjectPattern(t Type) string {
	root, ok := subjectRoots[t]
	if !ok {
		return ""
	}
	return root + ".>"
}

// TypeOfSubject is the event type published on subject, false when no type is.
func TypeOfSubject(subject string) (Type, bool) {
	for _, t := range Types {
		if strings.HasPrefix(subject, subjectRoots[t]+".") && len(subject) > len(subjectRoots[t])+1 {
			return t, true
		}
	}
	return "", false
}

// CheckSubject says whether an event of type t may be taken from a message on subject: nil when
// subject is one of t's, else an error (ErrWrongSubject) naming both and where t belongs.
func CheckSubject(t Type, subject string) error {
	got, ok := TypeOfSubject(subject)
	if ok && got == t {
		return nil
	}
	what := "no event type's subject"
	if ok {
		what = "a " + string(got) + " subject"
	}
	return fmt.Errorf("a %s event on %s (%s): %w; %s events are taken only from %s",
		t, subject, what, ErrWrongSubject, t, SubjectPattern(t))
}
