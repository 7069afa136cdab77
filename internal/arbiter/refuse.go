package arbiter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/backoff"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
)

// errRefused marks an event the arbiter will not act on: it came on a subject of another type
// (its sender may publish that subject, not that event), or it says what cannot be true.
var errRefused = errors.New("refused")

// refusedBy names the arbiter on the DLQ copies of what it refused (bus.HeaderRefusedBy).
const refusedBy = "arbiter"

// progressSlack is what a job.progress may claim beyond the time the job has run: clocks of the
// job and the arbiter a minute apart, and the seconds between an instance's launch decision and
// its start are well within it. Its time may be as far ahead of the arbiter's clock.
const progressSlack = 2 * time.Minute

// take folds one event of a message on subject, unless its type is not published there.
func (f *inputs) take(e events.Event, subject string) error {
	if err := events.CheckSubject(e.EventType(), subject); err != nil {
		f.m.refused.WithLabelValues(string(e.EventType()), "subject").Inc()
		return fmt.Errorf("%w: %w", errRefused, err)
	}
	if err := events.CheckTime(e, f.clock.Now()); err != nil {
		// The recorder dead-letters it (it checks the same rule); here it is only not acted on.
		f.log.Warn("skipping an event dated ahead of this arbiter's clock", "id", e.Header().ID, "err", err)
		return nil
	}
	if err := f.foldEvent(e); err != nil {
		return err
	}
	f.m.events.WithLabelValues(string(e.EventType())).Inc()
	return nil
}

// refuse stores m in DLQ with the reasons its events were refused, without waiting: the
// consumer that delivered m goes on. Every arbiter refuses the same messages; the copy's id
// keeps one (bus.Refused).
func (f *inputs) refuse(m jetstream.Msg, reasons []string) {
	reason := strings.Join(reasons, "; ")
	stream := ""
	if md, err := m.Metadata(); err == nil {
		stream = md.Stream
	}
	dead, opts := bus.Refused(m, stream, refusedBy, reason)
	f.log.Warn("refused an event; not acted on, sent to DLQ", "subject", m.Subject(), "reason", reason)
	go func() {
		delays := backoff.Policy{Min: time.Second, Max: 30 * time.Second}
		var err error
		for try := 1; try <= refuseTries; try++ {
			ctx, cancel := context.WithTimeout(context.Background(), outsideCall)
			_, err = f.js.PublishMsg(ctx, dead, opts...)
			cancel()
			if err == nil {
				return
			}
			if try < refuseTries {
				time.Sleep(delays.Delay(try))
			}
		}
		f.log.Error("could not store a refused event in DLQ; it was not acted on", "subject", m.Subject(),
			"reason", reason, "tries", refuseTries, "err", err)
	}()
}

// refuseTries is how often a refused message's DLQ copy is tried, about two minutes in all: the
// arbiters follow with ordered consumers, which never redeliver.
const refuseTries = 6

// eventAt names event i of a message in a reason: its id, and its index in a batch.
func eventAt(evs []events.Event, i int) string {
	if len(evs) == 1 {
		return "event " + evs[0].Header().ID + ": "
	}
	return fmt.Sprintf("events[%d] %s: ", i, evs[i].Header().ID)
}

// checkProgress refuses a job.progress that claims more work than the job can have done by its
// time: the time since its first instance was launched (jobs.Run.StartedAt; none before), plus
// progressSlack. A time further ahead of now than the slack is refused too, or it would allow
// any amount.
func checkProgress(j *job, e *events.JobProgress, now time.Time) error {
	if e.At.After(now.Add(progressSlack)) {
		return fmt.Errorf("%w: job.progress of %s is dated %s, more than %s after the arbiter's clock (%s)",
			errRefused, e.Job, e.At.Format(time.RFC3339), progressSlack, now.Format(time.RFC3339))
	}
	ran := time.Duration(0)
	if start := j.Run.StartedAt; !start.IsZero() {
		ran = max(e.At.Sub(start), 0)
	}
	if e.WorkDoneS <= (ran + progressSlack).Seconds() {
		return nil
	}
	since := "no instance of it has been launched"
	if !j.Run.StartedAt.IsZero() {
		since = "its first instance was launched at " + j.Run.StartedAt.Format(time.RFC3339)
	}
	return fmt.Errorf("%w: job.progress of %s says work_done_s %g at %s, more than the job can have run: %s "+
		"(%s of run time, and %s allowed beyond it)",
		errRefused, e.Job, e.WorkDoneS, e.At.Format(time.RFC3339), since, ran.Round(time.Second), progressSlack)
}
