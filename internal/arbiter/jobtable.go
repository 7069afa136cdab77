package arbiter

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/jobs"
	"github.com/bursar-dev/bursar/internal/placement"
)

// job is a job in the arbiter's memory. reported is the latest job.progress the
// job published itself; saved the run as last written to the bucket, at revision rev (0: none).
type job struct {
	jobs.Record
	reported *events.JobProgress
	applied  time.Time // the time of the last report taken as the work done
	saved    jobs.Run
	rev      uint64
	told     events.JobState  // the last job.state published
	spells   placement.Spells // spot as this arbiter saw it at the job's decisions; a new leader starts afresh
}

// jobTable is the arbiter's table of jobs, by name.
type jobTable map[string]*job

// isJob says whether the workload is a job (of bursar.yaml or submitted).
func (l *ledger) isJob(workload string) bool {
	_, ok := l.jobs[workload]
	return ok
}

// activeJobs are the jobs still to run, and those ended that still hold an instance (a stop that
// failed is tried again), by priority (higher first) then name.
func (l *ledger) activeJobs() []*job {
	var out []*job
	for name, j := range l.jobs {
		if !j.Run.Ended() || liveReplica(l.books[name]) != nil {
			out = append(out, j)
		}
	}
	slices.SortFunc(out, func(a, b *job) int {
		return cmp.Or(cmp.Compare(b.Spec.Workload.Job.Priority, a.Spec.Workload.Job.Priority),
			cmp.Compare(a.Spec.Workload.Name, b.Spec.Workload.Name))
	})
	return out
}

// touchedJobs are the active jobs whose books changed (dirty), in activeJobs' order.
func (l *ledger) touchedJobs(dirty map[string]bool) []*job {
	return slices.DeleteFunc(l.activeJobs(), func(j *job) bool { return !dirty[j.Spec.Workload.Name] })
}

// takeRuns makes the runs a new leader read its own. A run key that is missing or
// holds something else is written at the next save.
func (l *ledger) takeRuns(runs map[string]jobs.StoredRun) {
	for name, j := range l.jobs {
		st, found := runs[jobs.StateKey(name)]
		switch {
		case !found:
			j.saved, j.rev = jobs.Run{}, 0
		case !st.OK:
			j.saved, j.rev = jobs.Run{}, st.Rev
		default:
			j.Run, j.saved, j.rev = st.Run, st.Run, st.Rev
		}
	}
}

// badSpec reports a submission key that holds something else, and queues it for the leader to
// restore from its table; a job it does not know (submitted while no arbiter ran) is lost and
// must be submitted again.
func (l *ledger) badSpec(e jetstream.KeyValueEntry, err error) {
	action := "the job is unknown here: submit it again"
	if l.jobNamed(e.Key()) != nil {
		action = "the leader writes the submission it knows back over it"
		l.badSpecs[e.Key()] = e.Revision()
	}
	l.corrupt.report(corruptionOf(e, err, action))
}

// badRun reports a run key that holds something else; the leader writes its run of the job back
// at its next save.
func (l *ledger) badRun(e jetstream.KeyValueEntry, err error) {
	l.corrupt.report(corruptionOf(e, err, "the leader writes the job's run it knows back over it"))
	name := strings.TrimPrefix(e.Key(), bus.JobStatePrefix)
	for n, j := range l.jobs {
		if jobs.StateKey(n) == e.Key() || n == name {
			j.saved = jobs.Run{} // differs from any run: saveJobs writes it
			j.rev = max(j.rev, e.Revision())
		}
	}
	signal(l.jobsSave)
}

// jobNamed is the job whose submission key is key.
func (l *ledger) jobNamed(key string) *job {
	for n, j := range l.jobs {
		if jobs.SpecKey(n) == key {
			return j
		}
	}
	return nil
}

// restoreSpecs writes back, while leading, the submissions badSpec queued, each by a
// compare-and-set on the revision found there.
func (k *books) restoreSpecs(ctx context.Context) {
	todo := map[string]jobs.Spec{}
	var revs map[string]uint64
	k.with(func(l *ledger) {
		if !l.leading || len(l.badSpecs) == 0 {
			return
		}
		revs = maps.Clone(l.badSpecs)
		clear(l.badSpecs)
		for key := range revs {
			if j := l.jobNamed(key); j != nil {
				todo[key] = j.Spec
			}
		}
	})
	for key, spec := range todo {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		ok, err := k.runs.RestoreSpec(cctx, spec, revs[key])
		cancel()
		switch {
		case err != nil:
			k.log.Warn("could not restore a job's submission; will retry", "key", key, "err", err)
			k.with(func(l *ledger) { l.badSpecs[key] = revs[key] })
		case ok:
			k.log.Info("restored a job's submission", "key", key)
		}
	}
}
