package arbiter

import (
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// View is a digest of everything the arbiter folds from the streams: the offers and their
// prices, the reclaim notices, what the actuators were reported running, telemetry, and the
// progress jobs reported. Two equal digests mean no event changed the view.
func (s *Service) View() string {
	var b strings.Builder
	b.WriteString(s.mk.digest())
	s.bk.with(func(l *ledger) {
		for name, j := range l.jobs {
			fmt.Fprintf(&b, "job %s reported %v\n", name, j.reported != nil)
		}
	})
	return b.String()
}

// Folded counts the events folded into the view, of every type.
func (s *Service) Folded() float64 {
	n := 0.0
	for _, t := range []string{"price.observed", "capacity.reclaimed", "gpu.sample", "tokens.sample",
		"replica.state", "job.progress"} {
		n += testutil.ToFloat64(s.m.events.WithLabelValues(t))
	}
	return n
}

// Refused counts the events of type t the arbiter refused, for why (subject or implausible).
func (s *Service) Refused(t, why string) float64 {
	return testutil.ToFloat64(s.m.refused.WithLabelValues(t, why))
}
