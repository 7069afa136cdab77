package arbiter

import (
	"context"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/jobs"
)

// under runs fn on the ledger under the books' lock and returns what it returns.
func under[T any](s *Service, fn func(l *ledger) T) T {
	var out T
	s.bk.with(func(l *ledger) { out = fn(l) })
	return out
}

// Pass runs one planning pass now.
func (s *Service) Pass(ctx context.Context) { s.pass(ctx, "test") }

// Report polls the actuator once and folds what it says.
func (s *Service) Report(ctx context.Context) { s.report(ctx, s.o.Actuator.(actuate.Reporter)) }

// InFlight counts the actions recorded and not finished (awaiting approval excluded).
func (s *Service) InFlight() int {
	return under(s, func(l *ledger) int {
		n := 0
		for _, b := range l.books {
			for _, r := range b.Actions {
				if r.Stage != StageAwaiting {
					n++
				}
			}
		}
		return n
	})
}

// KnowsPrice says whether the market view holds offer id at price p.
func (s *Service) KnowsPrice(id string, p float64) bool {
	o, ok := s.mk.offers.get(id)
	return ok && o.PricePerHour == p
}

// KnowsNotice says whether the market view holds reclaim notice id.
func (s *Service) KnowsNotice(id string) bool {
	return s.mk.hasNotice(id)
}

// Books returns a copy of the books (nil when not leading).
func (s *Service) Books() map[string]*Book {
	return under(s, func(l *ledger) map[string]*Book {
		out := map[string]*Book{}
		for w, b := range l.books {
			out[w] = b.clone()
		}
		return out
	})
}

// PlansDropped counts the full plans thrown away because the books changed while they were made.
func (s *Service) PlansDropped() float64 { return testutil.ToFloat64(s.m.dropped) }

// JobPlans counts the jobs put to the deadline planner so far.
func (s *Service) JobPlans() float64 { return testutil.ToFloat64(s.m.jobPlans) }

// Leads counts the times this arbiter took the lead.
func (s *Service) Leads() uint64 {
	return under(s, func(l *ledger) uint64 {
		return l.lead
	})
}

// Durable says whether every book is written as it is in memory.
func (s *Service) Durable() bool {
	return under(s, func(l *ledger) bool {
		if len(l.unsaved) > 0 {
			return false
		}
		for _, b := range l.books {
			if b.saved != b.ver {
				return false
			}
		}
		return true
	})
}

// Placed counts the books holding replicas.
func (s *Service) Placed() int {
	return under(s, func(l *ledger) int {
		n := 0
		for _, b := range l.books {
			if len(b.Replicas) > 0 {
				n++
			}
		}
		return n
	})
}

// JobState is the job's state in this arbiter's table, "" when it knows no such job.
func (s *Service) JobState(name string) events.JobStatus {
	return under(s, func(l *ledger) events.JobStatus {
		if j := l.jobs[name]; j != nil {
			return j.Run.State
		}
		return ""
	})
}

// JobToldID is the id of the last job.state this arbiter published for the job, "" when none.
func (s *Service) JobToldID(name string) string {
	return under(s, func(l *ledger) string {
		if j := l.jobs[name]; j != nil {
			return j.told.ID
		}
		return ""
	})
}

// JobCancelled says whether this arbiter knows the job as cancelled.
func (s *Service) JobCancelled(name string) bool {
	return under(s, func(l *ledger) bool {
		j := l.jobs[name]
		return j != nil && j.Spec.Cancelled
	})
}

// JobReported says whether the job's own job.progress reached this arbiter.
func (s *Service) JobReported(name string) bool {
	return under(s, func(l *ledger) bool {
		j := l.jobs[name]
		return j != nil && j.reported != nil
	})
}

// JobRunOf is the job's run in this arbiter's table.
func (s *Service) JobRunOf(name string) (run jobs.Run, ok bool) {
	s.bk.with(func(l *ledger) {
		if j := l.jobs[name]; j != nil {
			run, ok = j.Run, true
		}
	})
	return run, ok
}

// Demand is how many replicas workload's telemetry asks for now.
// SizingRate is the rate a serving workload sized by throughput is planned for now (demand.go).
func (s *Service) SizingRate(workload string) float64 {
	w, ok := s.o.Config.Workload(workload)
	if !ok {
		return 0
	}
	rate, _, _, _ := s.mk.demandRate(w, s.o.Clock.Now())
	return rate
}

func (s *Service) Demand(workload string) int {
	w, ok := s.o.Config.Workload(workload)
	if !ok {
		return 0
	}
	return s.mk.demand(w, 0, s.o.Clock.Now())
}
