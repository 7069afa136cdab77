package events_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/events/eventstest"
)

// TestEveryEventIsTakenOnlyFromItsOwnSubjects: each type's own Subject() passes the check, and
// the subject of every other type fails it with ErrWrongSubject, naming both types and where the
// event belongs.
func TestEveryEventIsTakenOnlyFromItsOwnSubjects(t *testing.T) {
	samples := eventstest.Samples(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), 1)
	if len(samples) != len(events.Types) {
		t.Fatalf("%d samples for %d types", len(samples), len(events.Types))
	}
	for _, e := range samples {
		if err := events.CheckSubject(e.EventType(), e.Subject()); err != nil {
			t.Errorf("%s on its own subject %s: %v", e.EventType(), e.Subject(), err)
		}
		if got, ok := events.TypeOfSubject(e.Subject()); !ok || got != e.EventType() {
			t.Errorf("TypeOfSubject(%s) = %q, %v; want %s", e.Subject(), got, ok, e.EventType())
		}
		for _, other := range samples {
			if other.EventType() == e.EventType() {
				continue
			}
			err := events.CheckSubject(e.EventType(), other.Subject())
			if !errors.Is(err, events.ErrWrongSubject) {
				t.Errorf("%s on %s: %v, want ErrWrongSubject", e.EventType(), other.Subject(), err)
				continue
			}
			for _, want := range []string{string(e.EventType()), other.Subject(), string(other.EventType()), events.SubjectPattern(e.EventType())} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%s on %s: %q does not say %q", e.EventType(), other.Subject(), err, want)
				}
			}
		}
	}
}

func TestSubjectsOfNoType(t *testing.T) {
	for _, subject := range []string{"", "bursar", "bursar.price", "bursar.price.", "bursar.job.progress",
		"bursar.job.other.x", "bursar.pricey.aws", "bursar.query.sql", "bursar.dlq.bursar.price.aws.x", "price.aws.x"} {
		if got, ok := events.TypeOfSubject(subject); ok {
			t.Errorf("TypeOfSubject(%q) = %s, want none", subject, got)
		}
		err := events.CheckSubject(events.TypePriceObserved, subject)
		if !errors.Is(err, events.ErrWrongSubject) || !strings.Contains(err.Error(), "no event type's subject") {
			t.Errorf("CheckSubject(price.observed, %q) = %v, want no event type's subject", subject, err)
		}
	}
}

// FuzzCheckSubject: a subject is taken for at most one type, and for that type only when it lies
// under the type's pattern.
func FuzzCheckSubject(f *testing.F) {
	for _, s := range []string{"bursar.price.aws.us-east-1", "bursar.job.progress.tune", "bursar.fleet.x.y", "bursar.job.", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, subject string) {
		n := 0
		for _, ty := range events.Types {
			err := events.CheckSubject(ty, subject)
			if err == nil {
				n++
				root := strings.TrimSuffix(events.SubjectPattern(ty), ">")
				if !strings.HasPrefix(subject, root) || len(subject) == len(root) {
					t.Fatalf("%s taken from %q, outside %s", ty, subject, events.SubjectPattern(ty))
				}
			} else if !errors.Is(err, events.ErrWrongSubject) {
				t.Fatalf("CheckSubject(%s, %q) = %v", ty, subject, err)
			}
		}
		if n > 1 {
			t.Fatalf("%q taken for %d types", subject, n)
		}
	})
}
