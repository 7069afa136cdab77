package arbiter

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/placement"
)

// JobSpec is a job's submission as the jobs bucket holds it (key job.<name>): what to run, who
// submitted it and when (the deadline of a deadline_in job counts from then), and whether it was
// cancelled.
type JobSpec struct {
	Workload    fleet.Workload `json:"workload"`
	SubmittedAt time.Time      `json:"submitted_at"`
	By          string         `json:"by"`
	Cancelled   bool           `json:"cancelled,omitempty"`
}

// Deadline is when the job must be done.
func (j JobSpec) Deadline() time.Time { return j.Workload.Job.Deadline(j.SubmittedAt) }

// JobRun is the leader's running account of a job (key state.<name>): its state, the work done
// (checkpointed), what it cost and lost, and the instance whose progress is being counted.
type JobRun struct {
	State       events.JobStatus `json:"state"`
	Done        time.Duration    `json:"done"`
	CreditedAt  time.Time        `json:"credited_at,omitzero"` // Done counts work up to here
	ChargedAt   time.Time        `json:"charged_at,omitzero"`  // USDSpent counts up to here
	USDSpent    float64          `json:"usd_spent"`
	Preemptions int              `json:"preemptions"`
	Lost        time.Duration    `json:"lost"` // launches and checkpoint loads: billed, unproductive
	// Replica is the instance whose work is counted; ReadyAt when it was first seen ready.
	Replica  string        `json:"replica,omitempty"`
	ReadyAt  time.Time     `json:"ready_at,omitzero"`
	Location string        `json:"location,omitempty"`
	Market   events.Market `json:"market,omitempty"`
	Price    float64       `json:"usd_per_hour,omitempty"`
	// OnDemand is the cheapest on-demand price per hour among the job's offers at the last
	// decision: what the same work would cost on-demand, for reports of the saving.
	OnDemand   float64   `json:"on_demand_usd_per_hour,omitempty"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	Reason     string    `json:"reason,omitempty"`
	// StartedAt is when the job's first instance was launched: no progress it reports can claim
	// more work than the time since (checkProgress).
	StartedAt time.Time `json:"started_at,omitzero"`
	// Epoch is the lease revision of the leader that wrote it, as a book's (Book.Epoch).
	Epoch uint64 `json:"epoch,omitempty"`
}

// Ended says the job needs nothing more: finished, cancelled or failed.
func (r JobRun) Ended() bool { return r.ended() }

func (r JobRun) ended() bool {
	return r.State == events.JobFinished || r.State == events.JobCancelled || r.State == events.JobFailed
}

// JobRecord is one job: its submission and its run.
type JobRecord struct {
	Spec JobSpec `json:"spec"`
	Run  JobRun  `json:"run"`
}

// job is a job in the arbiter's memory. reported is the latest job.progress the
// job published itself; saved the run as last written to the bucket, at revision rev (0: none).
type job struct {
	JobRecord
	reported *events.JobProgress
	applied  time.Time // the time of the last report taken as the work done
	saved    JobRun
	rev      uint64
	told     events.JobState  // the last job.state published
	spells   placement.Spells // spot as this arbiter saw it at the job's decisions; a new leader starts afresh
}

// jobs is the arbiter's table of jobs, by name.
type jobs map[string]*job

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
		if !j.Run.ended() || liveReplica(l.books[name]) != nil {
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

// configJobs are the jobs of bursar.yaml, with the time they count as submitted: now, unless the
// bucket already holds their submission.
func configJobs(cfg *fleet.Config, now time.Time) []JobSpec {
	var out []JobSpec
	for _, w := range cfg.Workloads {
		if w.IsJob() {
			out = append(out, JobSpec{Workload: w, SubmittedAt: now, By: "bursar.yaml"})
		}
	}
	return out
}

// jobKV reads and writes the jobs bucket; report (may be nil) is told of a run key found
// holding something else when the leader writes over it.
type jobKV struct {
	kv     jetstream.KeyValue
	report func(Corruption)
}

func specKey(name string) string  { return bus.JobSpecPrefix + events.Token(name) }
func stateKey(name string) string { return bus.JobStatePrefix + events.Token(name) }

// create stores a new submission; it reports false when the job is already submitted.
func (k jobKV) create(ctx context.Context, j JobSpec) (bool, error) {
	data, err := json.Marshal(j)
	if err != nil {
		return false, fmt.Errorf("encoding job %s: %w", j.Workload.Name, err)
	}
	_, err = k.kv.Create(ctx, specKey(j.Workload.Name), data)
	if errors.Is(err, jetstream.ErrKeyExists) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("storing job %s: %w", j.Workload.Name, err)
	}
	return true, nil
}

// cancel marks a submission cancelled.
func (k jobKV) cancel(ctx context.Context, name string) error {
	e, err := k.kv.Get(ctx, specKey(name))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("no job %q is submitted (arbiter job status lists them): %w", name, errNoJob)
	}
	if err != nil {
		return fmt.Errorf("reading job %s: %w", name, err)
	}
	var j JobSpec
	if err := json.Unmarshal(e.Value(), &j); err != nil {
		return fmt.Errorf("decoding job %s: %w", name, err)
	}
	j.Cancelled = true
	data, _ := json.Marshal(j) //nolint:errchkjson // it decoded, so it encodes
	if _, err := k.kv.Update(ctx, specKey(name), data, e.Revision()); err != nil {
		return fmt.Errorf("cancelling job %s: %w", name, err)
	}
	return nil
}

var errNoJob = errors.New("no such job")

// saveRun writes the job's run by a compare-and-set on rev, the revision of its key last read or
// written (casPut, as a book is written), and returns the revision written: ErrDeposed when
// another arbiter wrote it since.
func (k jobKV) saveRun(ctx context.Context, name string, r JobRun, rev uint64) (uint64, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return 0, fmt.Errorf("encoding the state of job %s: %w", name, err)
	}
	wrote, err := casPut(ctx, k.kv, stateKey(name), data, rev, checkRun, func(e jetstream.KeyValueEntry, err error) {
		if k.report != nil {
			k.report(corruptionOf(e, err, "restored from the leader's copy"))
		}
	})
	if err != nil {
		return 0, fmt.Errorf("saving the state of job %s: %w", name, err)
	}
	return wrote, nil
}

// storedRun is a job's run as the bucket holds it: the run (ok: the value is one) and the
// revision of its key.
type storedRun struct {
	run JobRun
	ok  bool
	rev uint64
}

// loadRuns reads every job's run as the bucket holds it now, by key, for a new leader: as the
// books, the runs it writes are compare-and-sets on the revisions it read.
func (k jobKV) loadRuns(ctx context.Context) (map[string]storedRun, error) {
	out := map[string]storedRun{}
	err := bus.EachLatest(ctx, k.kv, bus.JobStatePrefix+">", func(e jetstream.KeyValueEntry) {
		run, err := decodeRun(e.Value())
		out[e.Key()] = storedRun{run: run, ok: err == nil, rev: e.Revision()}
	})
	if err != nil {
		return nil, fmt.Errorf("reading the jobs' states: %w", err)
	}
	return out, nil
}

// takeRuns makes the runs a new leader read its own. A run key that is missing or
// holds something else is written at the next save.
func (l *ledger) takeRuns(runs map[string]storedRun) {
	for name, j := range l.jobs {
		st, found := runs[stateKey(name)]
		switch {
		case !found:
			j.saved, j.rev = JobRun{}, 0
		case !st.ok:
			j.saved, j.rev = JobRun{}, st.rev
		default:
			j.Run, j.saved, j.rev = st.run, st.run, st.rev
		}
	}
}

// LoadJobs reads every job and its state from the jobs bucket, for "arbiter job status".
func LoadJobs(ctx context.Context, js jetstream.JetStream) ([]JobRecord, error) {
	kv, err := js.KeyValue(ctx, bus.BucketJobs)
	if err != nil {
		return nil, fmt.Errorf("opening KV bucket %s (is \"arbiter run\" up?): %w", bus.BucketJobs, err)
	}
	by := map[string]*JobRecord{}
	if err := bus.EachLatest(ctx, kv, ">", func(e jetstream.KeyValueEntry) { foldJobEntry(by, e) }); err != nil {
		return nil, fmt.Errorf("reading jobs: %w", err)
	}
	out := make([]JobRecord, 0, len(by))
	for _, k := range sortedKeys(by) {
		if by[k].Spec.Workload.Job != nil {
			out = append(out, *by[k])
		}
	}
	return out, nil
}

// foldJobEntry adds one bucket entry (a submission or a state) to by, keyed by token.
func foldJobEntry(by map[string]*JobRecord, e jetstream.KeyValueEntry) {
	kind, name, ok := strings.Cut(e.Key(), ".")
	if !ok {
		return
	}
	r := by[name]
	if r == nil {
		r = &JobRecord{}
		by[name] = r
	}
	switch kind + "." {
	case bus.JobSpecPrefix:
		if spec, err := decodeSpec(e.Key(), e.Value()); err == nil {
			r.Spec = spec
		}
	case bus.JobStatePrefix:
		if run, err := decodeRun(e.Value()); err == nil {
			r.Run = run
		}
	}
}

// errNotAJob says a jobs bucket value is not what its key holds.
var errNotAJob = errors.New("not a job")

// decodeSpec reads the submission stored under key: one that does not decode, names no job, or
// names a job other than its key's is errNotAJob.
func decodeSpec(key string, data []byte) (JobSpec, error) {
	var j JobSpec
	if err := json.Unmarshal(data, &j); err != nil {
		return j, fmt.Errorf("%w: %w", errNotAJob, err)
	}
	if j.Workload.Job == nil || j.Workload.Name == "" {
		return j, fmt.Errorf("%w: no job workload", errNotAJob)
	}
	if want := specKey(j.Workload.Name); key != want {
		return j, fmt.Errorf("%w: the submission of job %q belongs under %s", errNotAJob, j.Workload.Name, want)
	}
	return j, nil
}

// checkRun is decodeRun's verdict alone.
func checkRun(_ string, data []byte) error {
	_, err := decodeRun(data)
	return err
}

// decodeRun reads a job's run: one that does not decode or has no known state is errNotAJob.
func decodeRun(data []byte) (JobRun, error) {
	var r JobRun
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("%w: %w", errNotAJob, err)
	}
	switch r.State {
	case events.JobSubmitted, events.JobRunning, events.JobWaiting, events.JobCheckpointing,
		events.JobFinished, events.JobCancelled, events.JobFailed:
		return r, nil
	}
	return r, fmt.Errorf("%w: state %q", errNotAJob, r.State)
}

// restoreSpec writes j over a submission key that holds something else (rev: the revision
// found), by a compare-and-set on that revision. It reports false when someone wrote the key
// meanwhile.
func (k jobKV) restoreSpec(ctx context.Context, j JobSpec, rev uint64) (bool, error) {
	data, err := json.Marshal(j)
	if err != nil {
		return false, fmt.Errorf("encoding job %s: %w", j.Workload.Name, err)
	}
	_, err = k.kv.Update(ctx, specKey(j.Workload.Name), data, rev)
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("restoring job %s: %w", j.Workload.Name, err)
	}
	return true, nil
}

// ensureSpec is create for a job of bursar.yaml: when the key holds something that is not the
// job's submission, it is reported and replaced by j (submitted now: the original time is lost).
func (k jobKV) ensureSpec(ctx context.Context, j JobSpec, report func(Corruption)) error {
	if _, err := k.create(ctx, j); err != nil {
		return err
	}
	e, err := k.kv.Get(ctx, specKey(j.Workload.Name))
	if err != nil {
		return fmt.Errorf("reading job %s: %w", j.Workload.Name, err)
	}
	if _, derr := decodeSpec(e.Key(), e.Value()); derr != nil {
		report(corruptionOf(e, derr, "restored from bursar.yaml, submitted now"))
		_, err = k.restoreSpec(ctx, j, e.Revision())
	}
	return err
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
		if stateKey(n) == e.Key() || n == name {
			j.saved = JobRun{} // differs from any run: saveJobs writes it
			j.rev = max(j.rev, e.Revision())
		}
	}
	signal(l.jobsSave)
}

// jobNamed is the job whose submission key is key.
func (l *ledger) jobNamed(key string) *job {
	for n, j := range l.jobs {
		if specKey(n) == key {
			return j
		}
	}
	return nil
}

// restoreSpecs writes back, while leading, the submissions badSpec queued, each by a
// compare-and-set on the revision found there.
func (k *books) restoreSpecs(ctx context.Context, kv jobKV) {
	todo := map[string]JobSpec{}
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
		ok, err := kv.restoreSpec(cctx, spec, revs[key])
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
