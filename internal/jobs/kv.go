package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/bus"
)

// KV reads and writes the jobs bucket. OnCorrupt (may be nil) is told of a key found holding
// something other than what it holds, with what was done about it (action); the arbiter reports
// it as corruption.
type KV struct {
	KV        jetstream.KeyValue
	OnCorrupt func(e jetstream.KeyValueEntry, err error, action string)
}

// create stores a new submission; it reports false when the job is already submitted.
func (k KV) create(ctx context.Context, j Spec) (bool, error) {
	data, err := json.Marshal(j)
	if err != nil {
		return false, fmt.Errorf("encoding job %s: %w", j.Workload.Name, err)
	}
	_, err = k.KV.Create(ctx, SpecKey(j.Workload.Name), data)
	if errors.Is(err, jetstream.ErrKeyExists) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("storing job %s: %w", j.Workload.Name, err)
	}
	return true, nil
}

// cancel marks a submission cancelled.
func (k KV) cancel(ctx context.Context, name string) error {
	e, err := k.KV.Get(ctx, SpecKey(name))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("no job %q is submitted (arbiter job status lists them): %w", name, errNoJob)
	}
	if err != nil {
		return fmt.Errorf("reading job %s: %w", name, err)
	}
	var j Spec
	if err := json.Unmarshal(e.Value(), &j); err != nil {
		return fmt.Errorf("decoding job %s: %w", name, err)
	}
	j.Cancelled = true
	data, _ := json.Marshal(j) //nolint:errchkjson // it decoded, so it encodes
	if _, err := k.KV.Update(ctx, SpecKey(name), data, e.Revision()); err != nil {
		return fmt.Errorf("cancelling job %s: %w", name, err)
	}
	return nil
}

var errNoJob = errors.New("no such job")

// StoredRun is a job's run as the bucket holds it: the run (OK: the value is one) and the
// revision of its key.
type StoredRun struct {
	Run Run
	OK  bool
	Rev uint64
}

// LoadRuns reads every job's run as the bucket holds it now, by key, for a new leader: as the
// books, the runs it writes are compare-and-sets on the revisions it read.
func (k KV) LoadRuns(ctx context.Context) (map[string]StoredRun, error) {
	out := map[string]StoredRun{}
	err := bus.EachLatest(ctx, k.KV, bus.JobStatePrefix+">", func(e jetstream.KeyValueEntry) {
		run, err := DecodeRun(e.Value())
		out[e.Key()] = StoredRun{Run: run, OK: err == nil, Rev: e.Revision()}
	})
	if err != nil {
		return nil, fmt.Errorf("reading the jobs' states: %w", err)
	}
	return out, nil
}

// Load reads every job and its state from the jobs bucket, for "arbiter job status".
func Load(ctx context.Context, js jetstream.JetStream) ([]Record, error) {
	kv, err := js.KeyValue(ctx, bus.BucketJobs)
	if err != nil {
		return nil, fmt.Errorf("opening KV bucket %s (is \"arbiter run\" up?): %w", bus.BucketJobs, err)
	}
	by := map[string]*Record{}
	if err := bus.EachLatest(ctx, kv, ">", func(e jetstream.KeyValueEntry) { foldEntry(by, e) }); err != nil {
		return nil, fmt.Errorf("reading jobs: %w", err)
	}
	out := make([]Record, 0, len(by))
	for _, k := range slices.Sorted(maps.Keys(by)) {
		if by[k].Spec.Workload.Job != nil {
			out = append(out, *by[k])
		}
	}
	return out, nil
}

// foldEntry adds one bucket entry (a submission or a state) to by, keyed by token.
func foldEntry(by map[string]*Record, e jetstream.KeyValueEntry) {
	kind, name, ok := strings.Cut(e.Key(), ".")
	if !ok {
		return
	}
	r := by[name]
	if r == nil {
		r = &Record{}
		by[name] = r
	}
	switch kind + "." {
	case bus.JobSpecPrefix:
		if spec, err := DecodeSpec(e.Key(), e.Value()); err == nil {
			r.Spec = spec
		}
	case bus.JobStatePrefix:
		if run, err := DecodeRun(e.Value()); err == nil {
			r.Run = run
		}
	}
}

// RestoreSpec writes j over a submission key that holds something else (rev: the revision
// found), by a compare-and-set on that revision. It reports false when someone wrote the key
// meanwhile.
func (k KV) RestoreSpec(ctx context.Context, j Spec, rev uint64) (bool, error) {
	data, err := json.Marshal(j)
	if err != nil {
		return false, fmt.Errorf("encoding job %s: %w", j.Workload.Name, err)
	}
	_, err = k.KV.Update(ctx, SpecKey(j.Workload.Name), data, rev)
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("restoring job %s: %w", j.Workload.Name, err)
	}
	return true, nil
}

// EnsureSpec is create for a job of bursar.yaml: when the key holds something that is not the
// job's submission, it is reported (OnCorrupt) and replaced by j (submitted now: the original
// time is lost).
func (k KV) EnsureSpec(ctx context.Context, j Spec) error {
	if _, err := k.create(ctx, j); err != nil {
		return err
	}
	e, err := k.KV.Get(ctx, SpecKey(j.Workload.Name))
	if err != nil {
		return fmt.Errorf("reading job %s: %w", j.Workload.Name, err)
	}
	if _, derr := DecodeSpec(e.Key(), e.Value()); derr != nil {
		k.corrupt(e, derr, "restored from bursar.yaml, submitted now")
		_, err = k.RestoreSpec(ctx, j, e.Revision())
	}
	return err
}

// corrupt tells OnCorrupt, when there is one, of a key holding something else.
func (k KV) corrupt(e jetstream.KeyValueEntry, err error, action string) {
	if k.OnCorrupt != nil {
		k.OnCorrupt(e, err, action)
	}
}
