package arbiter

import (
	"fmt"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
)

// Corruption is a value in one of the arbiter's buckets (a book, a job, the lease) that does not
// decode as what its key holds: written by something other than an arbiter (a server's reply
// stored through a reply subject, a hand edit). The arbiter never acts on one; it reports it and
// writes over it what it knows (Action says what it did).
type Corruption struct {
	Bucket   string
	Key      string
	Revision uint64
	Found    string // the start of the value, quoted
	Err      error  // why it is not what the key holds
	Action   string
}

func (c Corruption) String() string {
	return fmt.Sprintf("%s %s (revision %d) holds %s, not what the key holds (%v): %s",
		c.Bucket, c.Key, c.Revision, c.Found, c.Err, c.Action)
}

// foundLimit is how much of a corrupt value a report quotes.
const foundLimit = 160

func corruptionOf(e jetstream.KeyValueEntry, err error, action string) Corruption {
	return Corruption{Bucket: e.Bucket(), Key: e.Key(), Revision: e.Revision(), Found: quote(e.Value()), Err: err,
		Action: action}
}

// quote shows the start of a value: its text when it is text, else its size.
func quote(v []byte) string {
	if !utf8.Valid(v) {
		return fmt.Sprintf("%d bytes of binary", len(v))
	}
	if len(v) > foundLimit {
		return strconv.Quote(string(v[:foundLimit])) + fmt.Sprintf("… (%d bytes)", len(v))
	}
	return strconv.Quote(string(v))
}

// corruptions reports corruption loudly, once per key and revision: an error in the log naming
// the key and what it holds, bursar_arbiter_corrupt_values_total, and OnCorrupt (the system posts
// it to Slack).
type corruptions struct {
	log     func(msg string, args ...any)
	alert   func(Corruption)
	counter *prometheus.CounterVec

	mu   sync.Mutex
	seen map[string]uint64 // bucket/key → the last revision reported
}

func newCorruptions(reg prometheus.Registerer, logError func(string, ...any), alert func(Corruption)) *corruptions {
	c := &corruptions{log: logError, alert: alert, seen: map[string]uint64{},
		counter: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bursar_arbiter_corrupt_values_total",
			Help: "Values found in the arbiter's KV buckets (books, jobs, budgets, the lease) that do not decode as what their key holds, by bucket."},
			[]string{"bucket"})}
	if reg != nil {
		reg.MustRegister(c.counter)
	}
	return c
}

func (c *corruptions) report(x Corruption) {
	c.mu.Lock()
	id := x.Bucket + "/" + x.Key
	if c.seen[id] == x.Revision {
		c.mu.Unlock()
		return
	}
	c.seen[id] = x.Revision
	c.mu.Unlock()
	c.counter.WithLabelValues(x.Bucket).Inc()
	c.log("a value in the store is not what its key holds (written by something other than an arbiter?)",
		"bucket", x.Bucket, "key", x.Key, "revision", x.Revision, "found", x.Found, "why", x.Err, "action", x.Action)
	if c.alert != nil {
		c.alert(x)
	}
}

// reportEntry reports the value e found, with what was done about it (action): the jobs bucket's
// OnCorrupt.
func (c *corruptions) reportEntry(e jetstream.KeyValueEntry, err error, action string) {
	c.report(corruptionOf(e, err, action))
}

// ReportCorrupt reports corruption found outside the service (the budgets bucket) as the
// service reports its own: the error log, bursar_arbiter_corrupt_values_total and OnCorrupt.
func (s *Service) ReportCorrupt(c Corruption) { s.corrupt.report(c) }

// storeCorrupt hands a corrupt value of the budgets bucket to OnCorrupt, or logs it without one.
func (b *Budgets) storeCorrupt(e jetstream.KeyValueEntry, err error, action string) {
	c := corruptionOf(e, err, action)
	if b.o.OnCorrupt != nil {
		b.o.OnCorrupt(c)
		return
	}
	b.o.Log.Error("a value in the store is not what its key holds (written by something other than an arbiter?)",
		"bucket", c.Bucket, "key", c.Key, "revision", c.Revision, "found", c.Found, "why", c.Err, "action", c.Action)
}
