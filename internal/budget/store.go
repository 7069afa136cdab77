package budget

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/bus"
)

// ErrNotFound says no policy of that name exists (or it was deleted).
var ErrNotFound = errors.New("budget policy not found")

// Revision is one stored version of a policy: who wrote it and when. The KV bucket keeps them all
// (up to its history depth), so the revisions of a policy are its audit trail.
type Revision struct {
	Policy   Policy    `json:"policy"`
	Actor    string    `json:"actor"`
	At       time.Time `json:"at"`
	Deleted  bool      `json:"deleted,omitempty"`
	Revision uint64    `json:"revision"` // the KV sequence; set on read, not stored
}

// Store keeps budget policies in the NATS KV bucket bus.BucketBudgets. A delete is written as a
// revision marked deleted, so the trail says who deleted a policy and when. Only the arbiter
// writes it (ServeAdmin); the budget commands read it and ask the arbiter to write (Admin).
type Store struct {
	kv jetstream.KeyValue
	// OnCorrupt, when set, is told of each value Watch finds that is not a policy revision of
	// its key (ErrCorrupt), and what was done about it.
	OnCorrupt func(e jetstream.KeyValueEntry, err error, action string)
}

// ErrCorrupt says a value of the budgets bucket is not a policy revision of its key: written by
// something other than the arbiter (a server's reply stored through a reply subject).
var ErrCorrupt = errors.New("not a budget policy revision")

// NewStore returns a store over an open bucket.
func NewStore(kv jetstream.KeyValue) *Store { return &Store{kv: kv} }

// OpenStore opens the budget bucket, creating it as bus defines it when it does not exist yet
// (on a NATS that Ensure has not set up; the budget role may not create it).
func OpenStore(ctx context.Context, js jetstream.JetStream) (*Store, error) {
	kv, err := js.KeyValue(ctx, bus.BucketBudgets)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		for _, cfg := range bus.Buckets(bus.Options{}) {
			if cfg.Bucket == bus.BucketBudgets {
				kv, err = js.CreateOrUpdateKeyValue(ctx, cfg)
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("opening KV bucket %s: %w", bus.BucketBudgets, err)
	}
	return NewStore(kv), nil
}

// Put validates p and stores it as a new revision by actor at the given time.
func (s *Store) Put(ctx context.Context, p Policy, actor string, at time.Time) (uint64, error) {
	p.Normalize()
	if err := p.Validate(); err != nil {
		return 0, err
	}
	return s.write(ctx, Revision{Policy: p, Actor: actor, At: at})
}

// Delete marks the policy deleted, by actor at the given time.
func (s *Store) Delete(ctx context.Context, name, actor string, at time.Time) (uint64, error) {
	cur, err := s.Get(ctx, name)
	if err != nil {
		return 0, err
	}
	return s.write(ctx, Revision{Policy: cur.Policy, Actor: actor, At: at, Deleted: true})
}

func (s *Store) write(ctx context.Context, r Revision) (uint64, error) {
	if strings.TrimSpace(r.Actor) == "" {
		return 0, errors.New("writing a budget policy needs an actor: the NATS identity that asked for the change")
	}
	r.At = r.At.UTC()
	data, err := json.Marshal(r)
	if err != nil {
		return 0, fmt.Errorf("encoding budget policy %q: %w", r.Policy.Name, err)
	}
	rev, err := s.kv.Put(ctx, r.Policy.Name, data)
	if err != nil {
		return 0, fmt.Errorf("storing budget policy %q: %w", r.Policy.Name, err)
	}
	return rev, nil
}

// Get returns the latest revision of a live policy, or ErrNotFound.
func (s *Store) Get(ctx context.Context, name string) (Revision, error) {
	if !nameRE.MatchString(name) {
		return Revision{}, fmt.Errorf("%q: %w", name, ErrNotFound)
	}
	e, err := s.kv.Get(ctx, name)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return Revision{}, fmt.Errorf("%q: %w", name, ErrNotFound)
	}
	if err != nil {
		return Revision{}, fmt.Errorf("reading budget policy %q: %w", name, err)
	}
	r, err := decodeRevision(e)
	if err != nil {
		return Revision{}, err
	}
	if r.Deleted {
		return Revision{}, fmt.Errorf("%q (deleted by %s at %s): %w", name, r.Actor, r.At.Format(time.RFC3339), ErrNotFound)
	}
	return r, nil
}

// List returns the latest revision of every live policy, by name.
func (s *Store) List(ctx context.Context) ([]Revision, error) {
	keys, err := s.kv.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing budget policies: %w", err)
	}
	var out []Revision
	for k := range keys.Keys() {
		r, err := s.Get(ctx, k)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Revision) int { return strings.Compare(a.Policy.Name, b.Policy.Name) })
	return out, nil
}

// History returns every kept revision of a policy, oldest first, deletions included.
func (s *Store) History(ctx context.Context, name string) ([]Revision, error) {
	if !nameRE.MatchString(name) {
		return nil, fmt.Errorf("%q: %w", name, ErrNotFound)
	}
	entries, err := s.kv.History(ctx, name)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, fmt.Errorf("%q: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the history of budget policy %q: %w", name, err)
	}
	out := make([]Revision, 0, len(entries))
	for _, e := range entries {
		if e.Operation() != jetstream.KeyValuePut {
			continue // a purge or delete made outside this store carries no actor
		}
		r, err := decodeRevision(e)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Watch calls apply with every live policy, once the bucket's current contents are read and then
// after every change, until ctx ends, across restarts of the server (bus.Watch). The arbiter
// uses it to keep its Gate current.
func (s *Store) Watch(ctx context.Context, log *slog.Logger, apply func([]Policy)) error {
	w, err := bus.Watch(ctx, s.kv, ">", log)
	if err != nil {
		return fmt.Errorf("watching budget policies: %w", err)
	}
	defer w.Stop()
	live := map[string]Policy{}
	good := map[string][]byte{} // the last value of each key that was a revision
	loaded := false             // the watcher sends nil once the current contents are read
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-w.Updates():
			if !ok {
				return nil // ctx ended
			}
			switch {
			case e == nil:
				loaded = true
			case e.Operation() == jetstream.KeyValuePut && !isRevision(e):
				s.restore(ctx, e, good[e.Key()])
				continue // the policy stays as it was
			default:
				update(live, e)
				good[e.Key()] = e.Value()
				if e.Operation() != jetstream.KeyValuePut {
					delete(good, e.Key())
				}
			}
			if loaded {
				apply(values(live))
			}
		}
	}
}

func isRevision(e jetstream.KeyValueEntry) bool {
	_, err := decodeRevision(e)
	return err == nil
}

// restore writes the last revision of a key over a value that is not one, by a compare-and-set
// on its revision: from the watch's memory, else from the bucket's history. A key with no
// revision to go back to is deleted (the policy then does not exist, as before the value came).
func (s *Store) restore(ctx context.Context, e jetstream.KeyValueEntry, last []byte) {
	_, derr := decodeRevision(e)
	if last == nil {
		last = s.lastRevision(ctx, e.Key())
	}
	var err error
	action := "the last revision of the policy is written back over it; the policy applies as it was"
	if last != nil {
		_, err = s.kv.Update(ctx, e.Key(), last, e.Revision())
	} else {
		action = "no revision of the key to go back to: it is deleted"
		err = s.kv.Delete(ctx, e.Key(), jetstream.LastRevision(e.Revision()))
	}
	if err != nil && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		action += fmt.Sprintf(" (failed: %v; tried again at the next restart)", err)
	}
	if s.OnCorrupt != nil {
		s.OnCorrupt(e, derr, action)
	}
}

// lastRevision is the newest value of key's history that is a revision, nil if none is kept.
func (s *Store) lastRevision(ctx context.Context, key string) []byte {
	hist, err := s.kv.History(ctx, key)
	if err != nil {
		return nil
	}
	for i := len(hist) - 1; i >= 0; i-- {
		if hist[i].Operation() == jetstream.KeyValuePut && isRevision(hist[i]) {
			return hist[i].Value()
		}
	}
	return nil
}

func update(live map[string]Policy, e jetstream.KeyValueEntry) {
	r, err := decodeRevision(e)
	if e.Operation() != jetstream.KeyValuePut || err != nil || r.Deleted {
		delete(live, e.Key())
		return
	}
	live[e.Key()] = r.Policy
}

func values(m map[string]Policy) []Policy {
	out := make([]Policy, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Policy) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func decodeRevision(e jetstream.KeyValueEntry) (Revision, error) {
	var r Revision
	if err := json.Unmarshal(e.Value(), &r); err != nil {
		return r, fmt.Errorf("decoding budget policy %q revision %d: %w: %w", e.Key(), e.Revision(), ErrCorrupt, err)
	}
	if r.Policy.Name != e.Key() || strings.TrimSpace(r.Actor) == "" {
		return r, fmt.Errorf("budget policy %q revision %d names policy %q, actor %q: %w",
			e.Key(), e.Revision(), r.Policy.Name, r.Actor, ErrCorrupt)
	}
	r.Revision = e.Revision()
	return r, nil
}
