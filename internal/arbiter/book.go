package arbiter

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/placement"
)

// Book is one workload's desired placement and its actions in flight, stored as one key of the
// placement KV bucket. Replicas and actions live in the same value so that recording an action
// and the replicas it launches is one atomic write, and every write is a compare-and-set on the
// key's revision: a deposed leader's write fails instead of overwriting its successor's.
type Book struct {
	Workload   string    `json:"workload"`
	Replicas   []Rep     `json:"replicas"`
	Actions    []Record  `json:"actions"`           // not finished: recorded, calling or awaiting_approval
	Done       []string  `json:"done,omitempty"`    // ids of recently finished actions, newest last
	Notices    []string  `json:"notices,omitempty"` // reclaim notices already applied
	LastMoveAt time.Time `json:"last_move_at,omitzero"`
	// PrevMoveAt is the move before LastMoveAt: a move whose launches all found no capacity did
	// not happen, and its cooldown gives way to the previous move's (see undoFailedMove).
	PrevMoveAt time.Time `json:"prev_move_at,omitzero"`
	Epoch      uint64    `json:"epoch"` // the lease revision of the leader that wrote it
	// Holds are the approvals its awaiting actions wait for; Declined the rejected actions not
	// to ask about again for a while.
	Holds    []Hold     `json:"holds,omitempty"`
	Declined []Declined `json:"declined,omitempty"`
	// Lost is the capacity lost and not yet restored: launches that restore it are not held for
	// approve_over under a budget that restores first.
	Lost Loss `json:"lost,omitzero"`
	// Remedied are the cost anomalies a remedy was asked about for this workload, newest last: an
	// anomaly asks once, whatever the answer (remedy.go).
	Remedied []string `json:"remedied,omitempty"`

	rev uint64 // KV revision this copy was read or written at
	// ver counts the changes made to this copy in memory, saved the last of them written; the
	// book is durable when they are equal (see flush).
	ver, saved uint64
}

// Rep is one replica as the arbiter intends it. Replicas of one group are interchangeable to an
// actuator (it sets a count); the ids exist for the planner and the audit log.
type Rep struct {
	ID           string                 `json:"id"`
	Offer        string                 `json:"offer"`
	Location     string                 `json:"location"`
	Market       events.Market          `json:"market"`
	State        placement.ReplicaState `json:"state"`
	Since        time.Time              `json:"since"`
	Deadline     time.Time              `json:"deadline,omitzero"`
	PricePerHour float64                `json:"usd_per_hour"`
	Notice       string                 `json:"notice,omitempty"`
	Move         bool                   `json:"move,omitempty"` // launched to move the workload for price
}

func (r Rep) group(workload string) actuate.Group {
	return actuate.Group{Workload: workload, Location: r.Location, Market: r.Market}
}

// Stage is how far an action got. An action is recorded before its actuator is called and marked
// calling just before the call; on restart a recorded action is called, and a calling one is
// first reconciled against what the actuator holds, so it is never applied twice.
type Stage string

// The stages of an unfinished action.
const (
	StageRecorded Stage = "recorded"
	StageCalling  Stage = "calling"
	StageAwaiting Stage = "awaiting_approval"
)

// Record is one action in flight.
type Record struct {
	Target        actuate.Target `json:"target"`
	PlanID        string         `json:"plan_id"`
	Stage         Stage          `json:"stage"`
	Drain         []string       `json:"drain,omitempty"` // replica ids a drain removes
	Launch        []Rep          `json:"launch,omitempty"`
	NeedsApproval bool           `json:"needs_approval,omitempty"`
	Hold          string         `json:"hold,omitempty"` // the approval an awaiting action waits for
	CostPerHour   float64        `json:"usd_per_hour_delta"`
	At            time.Time      `json:"at"`
	Tries         int            `json:"tries,omitempty"`
	LastError     string         `json:"last_error,omitempty"`
	// Received is when the reclaim notice this action answers reached the arbiter (wall clock),
	// for the reaction-time metric; zero for other actions.
	Received time.Time `json:"received,omitzero"`
	// Restores marks a launch that restores capacity the workload lost (see restoring).
	Restores bool `json:"restores,omitempty"`
}

// Count is how many replicas of g the book holds, what the actuator must hold for g once the
// actions in flight are done: those launching, ready or reclaimed but not yet gone. Draining
// replicas are on their way out.
func (b *Book) Count(g actuate.Group) int {
	n := 0
	for _, r := range b.Replicas {
		if r.group(b.Workload) == g && r.State != placement.StateDraining && r.State != abandoned {
			n++
		}
	}
	return n
}

func (b *Book) finished(id string) bool {
	return slices.Contains(b.Done, id) || slices.ContainsFunc(b.Actions, func(r Record) bool { return r.Target.ActionID == id })
}

// finish moves an action from in flight to done.
func (b *Book) finish(id string) {
	b.Actions = slices.DeleteFunc(b.Actions, func(r Record) bool { return r.Target.ActionID == id })
	b.Done = append(b.Done, id)
	if len(b.Done) > maxDone {
		b.Done = slices.Clone(b.Done[len(b.Done)-maxDone:])
	}
}

const maxDone = 128

func (b *Book) record(id string) *Record {
	for i := range b.Actions {
		if b.Actions[i].Target.ActionID == id {
			return &b.Actions[i]
		}
	}
	return nil
}

// clone is a deep copy: flush writes one while the book changes under the lock.
func (b *Book) clone() *Book {
	c := *b
	c.Replicas = slices.Clone(b.Replicas)
	c.Actions = slices.Clone(b.Actions)
	for i := range c.Actions {
		c.Actions[i].Drain = slices.Clone(c.Actions[i].Drain)
		c.Actions[i].Launch = slices.Clone(c.Actions[i].Launch)
	}
	c.Done = slices.Clone(b.Done)
	c.Notices = slices.Clone(b.Notices)
	c.Holds = slices.Clone(b.Holds)
	for i := range c.Holds {
		h := &c.Holds[i]
		h.Actions, h.Reasons = slices.Clone(h.Actions), slices.Clone(h.Reasons)
		h.Policies, h.Approvers = slices.Clone(h.Policies), slices.Clone(h.Approvers)
		h.Owners = maps.Clone(h.Owners)
		h.Plan.Actions = slices.Clone(h.Plan.Actions)
	}
	c.Declined = slices.Clone(b.Declined)
	c.Remedied = slices.Clone(b.Remedied)
	return &c
}

// ErrDeposed says a write of the leader's state (a book, a job's run) was refused: another
// arbiter wrote the key since this one read it, or this one's lease is no longer the one it took
// the lead under, so this one no longer leads.
var ErrDeposed = errors.New("placement changed under this arbiter: it no longer leads")

const bookPrefix = "workload."

// BookStore keeps the books durable. Save must write b only if nobody wrote its key since b was
// read (ErrDeposed otherwise), and remember the revision it wrote in b. The arbiter's is KVBooks;
// tests wrap it to make writes slow or fail.
type BookStore interface {
	Load(ctx context.Context) (map[string]*Book, error)
	Save(ctx context.Context, b *Book) error
}

// KVBooks reads and writes Books in the placement bucket. A key whose value is not a book of its
// workload (see decodeBook) is corruption, not a rival's write: Load skips it, Save writes over it
// with a compare-and-set on its revision, and both tell OnCorrupt (when set).
type KVBooks struct {
	KV        jetstream.KeyValue
	OnCorrupt func(Corruption)
}

func (s KVBooks) key(workload string) string { return bookPrefix + events.Token(workload) }

// Load reads every book, as one stream of the bucket's latest values (bus.EachLatest).
func (s KVBooks) Load(ctx context.Context) (map[string]*Book, error) {
	out := map[string]*Book{}
	err := bus.EachLatest(ctx, s.KV, bookPrefix+">", func(e jetstream.KeyValueEntry) {
		b, err := decodeBook(e.Key(), e.Value())
		if err != nil {
			s.corrupt(e, err, "skipped; the leader writes the workload's book anew over it")
			return
		}
		b.rev = e.Revision()
		out[b.Workload] = b
	})
	if err != nil {
		return nil, fmt.Errorf("reading placement: %w", err)
	}
	return out, nil
}

// Save writes b if nobody wrote its key since b was read (rev 0: only if the key is new), by
// casPut: a key that holds something that is not a book of b's workload is corruption, which b
// replaces (restore); a book of the workload there is another arbiter's write (ErrDeposed).
func (s KVBooks) Save(ctx context.Context, b *Book) error {
	data, err := encodeBook(b)
	if err != nil {
		return fmt.Errorf("encoding placement of %s: %w", b.Workload, err)
	}
	rev, err := casPut(ctx, s.KV, s.key(b.Workload), data, b.rev, checkBook, func(e jetstream.KeyValueEntry, err error) {
		s.corrupt(e, err, "restored from the leader's copy")
	})
	if errors.Is(err, nats.ErrMaxPayload) {
		return fmt.Errorf("saving placement of %s: its book is %d bytes encoded, over the NATS server's max_payload "+
			"(%d replicas, %d actions): raise max_payload on the NATS servers: %w",
			b.Workload, len(data), len(b.Replicas), len(b.Actions), err)
	}
	if err != nil {
		return fmt.Errorf("saving placement of %s: %w", b.Workload, err)
	}
	b.rev = rev
	return nil
}

func (s KVBooks) corrupt(e jetstream.KeyValueEntry, err error, action string) {
	if s.OnCorrupt != nil {
		s.OnCorrupt(corruptionOf(e, err, action))
	}
}

// LoadBooks reads every workload's book from the placement bucket, for `arbiter status`.
func LoadBooks(ctx context.Context, js jetstream.JetStream, bucket string) (map[string]*Book, error) {
	kv, err := js.KeyValue(ctx, bucket)
	if err != nil {
		return nil, fmt.Errorf("opening KV bucket %s: %w", bucket, err)
	}
	return KVBooks{KV: kv}.Load(ctx)
}
