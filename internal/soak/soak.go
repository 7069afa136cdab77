// Package soak runs the whole system for days of market time on this machine while things break
// at seeded moments, and checks at the end that nothing was lost or doubled. It drives the
// replay through the live service (internal/replay) on its own harness: a 3-node NATS cluster
// with every stream and bucket at R3, two arbiters (a leader and a standby), the recorder into
// ClickHouse, a collector's telemetry at a steady rate with a burst, and the capacity-model sim
// fleet on a real spot trace. The same seed runs once without faults, as the baseline the
// faulted run's availability and cost are held to.
package soak

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"time"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/replay"
	"github.com/bursar-dev/bursar/internal/store"
)

// Options configure a soak.
type Options struct {
	Trace  string        // a replay trace folder (AWS1)
	Market time.Duration // market time of the window (default 72h)
	Seed   uint64        // draws the window and the faults' moments
	Rate   int           // telemetry events per second of wall time (default 1,000)
	Engine store.Engine  // the ClickHouse the recorder writes to; each run gets its own database
	Dir    string        // scratch space (default the system's temporary directory)
	Log    *slog.Logger
	// NoApprovals runs without the approval policy, to measure what approvals cost the same seed.
	NoApprovals bool
}

// tolerance is how far the faulted run's availability and cost may be from the calm run's, in
// points.
const tolerance = 0.5

// event is one line of the fault timeline: its tick, market time and wall time.
type event struct {
	tick int
	at   time.Time
	wall time.Time
	what string
}

// runStats is what one run measured.
type runStats struct {
	faults         bool
	result         replay.Result
	timeline       []event
	leaderChanges  int
	tables         map[string]tally
	dead           uint64
	actions        int
	doubled        int
	bookMismatches []string
	loadAcked      int64
	loadFailed     int64
	refused        int64
	streamLost     int64      // events acked to the collector that the TELEMETRY stream no longer holds
	busLosses      []bus.Loss // the losses the collector's publisher was told of
	holds          holdTally
	slackPosts     int        // messages the fake Slack took (approval questions and alerts)
	slackRefused   int        // calls it refused while down
	asks           []ask      // the questions it was asked, in order
	holdLines      []holdLine // every hold, in the order the arbiters made it
	down           []spell    // ticks short of the target
	wall           time.Duration
}

// Summary is the soak's outcome: both runs, the process's peak memory and what broke.
type Summary struct {
	Calm, Faulted *runStats
	Market        time.Duration
	PeakRSSMB     float64
	Leaked        int      // goroutines still running after shutdown
	Broken        []string // invariants that did not hold
}

// Run runs the calm and the faulted run and checks the invariants. An error means the soak could
// not run; a broken invariant is in Summary.Broken (and Err).
func Run(ctx context.Context, o Options) (*Summary, error) {
	if o.Market <= 0 {
		o.Market = 72 * time.Hour
	}
	if o.Rate <= 0 {
		o.Rate = 1000
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Engine == nil {
		return nil, errors.New("soak: no ClickHouse engine to record into")
	}
	ro := replay.DefaultOptions()
	ro.Window, ro.Windows, ro.Seed = o.Market, 1, o.Seed%math.MaxUint32
	cfg, err := ro.Config()
	if err != nil {
		return nil, err
	}
	tr, err := replay.LoadTrace(os.DirFS(o.Trace), ".", replay.LoadOptions{TickSeconds: int(ro.Tick / time.Second)})
	if err != nil {
		return nil, err
	}
	before := goroutines()
	s := &Summary{Market: o.Market}
	for _, faults := range []bool{false, true} {
		run := &runStats{faults: faults}
		start := time.Now()
		f := replay.ServicePolicy(func(env replay.Env) (replay.Harness, error) { return newRig(o, run, env), nil })
		run.result, err = replay.EvaluateWith(ctx, tr, cfg, "bursar", f, true)
		run.wall = time.Since(start)
		if err != nil {
			return nil, fmt.Errorf("soak run %s: %w", map[bool]string{false: "without faults", true: "with faults"}[faults], err)
		}
		if faults {
			s.Faulted = run
		} else {
			s.Calm = run
		}
	}
	s.Leaked = settle(before)
	s.PeakRSSMB = peakRSS()
	s.check()
	return s, nil
}

// check lists the invariants that did not hold.
func (s *Summary) check() {
	for _, run := range []*runStats{s.Calm, s.Faulted} {
		name := run.name()
		for tbl, t := range run.tables {
			if t.recorded != t.published {
				s.broken("%s: %s holds %d of the %d events published; missing %s", name, tbl, t.recorded, t.published,
					describeMissing(t.missing, run.timeline))
			}
			if t.rows != t.recorded+t.unknown {
				s.broken("%s: %s holds %d rows for %d events (duplicated)", name, tbl, t.rows, t.recorded+t.unknown)
			}
			if t.unknown > 0 {
				s.broken("%s: %s holds %d events nobody published", name, tbl, t.unknown)
			}
		}
		if run.dead > 0 {
			s.broken("%s: %d messages in DLQ", name, run.dead)
		}
		if run.doubled > 0 {
			s.broken("%s: %d action ids reached the actuator more than once", name, run.doubled)
		}
		for _, m := range run.bookMismatches {
			s.broken("%s: books and actuator differ: %s", name, m)
		}
		for _, p := range run.holds.problems {
			s.broken("%s: %s", name, p)
		}
	}
	ca, fa := s.Calm.result.AvailabilityPct, s.Faulted.result.AvailabilityPct
	if math.Abs(ca-fa) > tolerance {
		s.broken("availability %.2f %% with faults, %.2f %% without: more than %.1f points apart", fa, ca, tolerance)
	}
	cc, fc := s.Calm.result.CostPct, s.Faulted.result.CostPct
	if math.Abs(cc-fc) > tolerance {
		s.broken("cost %.2f %% of on-demand with faults, %.2f %% without: more than %.1f points apart", fc, cc, tolerance)
	}
	if s.Leaked > 0 {
		s.broken("%d goroutines still running after shutdown", s.Leaked)
	}
}

func (s *Summary) broken(format string, args ...any) {
	s.Broken = append(s.Broken, fmt.Sprintf(format, args...))
}

// Err is the broken invariants as one error, nil when all held.
func (s *Summary) Err() error {
	if len(s.Broken) == 0 {
		return nil
	}
	return fmt.Errorf("soak: %d invariants broken: %v", len(s.Broken), s.Broken)
}

func (r *runStats) name() string {
	if r.faults {
		return "with faults"
	}
	return "without faults"
}

// totals are the run's events published and recorded, and those lost and duplicated.
func (r *runStats) totals() (published, recorded, lost, duplicated int64) {
	for _, t := range r.tables {
		published += t.published
		recorded += t.recorded
		lost += max(0, t.published-t.recorded)
		duplicated += max(0, t.rows-t.recorded-t.unknown)
	}
	return published, recorded, lost, duplicated
}
