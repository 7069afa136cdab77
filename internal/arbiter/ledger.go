package arbiter

import (
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/placement"
)

// ledger is what the leader keeps in memory: each workload's book, each job's run, and the rules
// that change them (settling what was observed, recording a plan's actions, holds and their
// decisions, a call's outcome). It is reached only through books.with, under the books' lock, so
// each of its methods runs with the lock held and none takes it; none does I/O, but for events
// published without waiting and a gate's review (record). The books write it out (books.go).
type ledger struct {
	cfg      *fleet.Config
	clock    Clock
	gate     Gate
	act      actuate.Actuator
	policy   placement.Policy
	interval time.Duration // the plan interval: a job's decisions are made at most this often
	mk       *market
	m        *metrics
	log      *slog.Logger
	ann      *announcer
	corrupt  *corruptions
	exec     *executor     // runs the books' actions: touchAll queues them
	saveReq  chan struct{} // wakes the books' saver (touch)
	jobsSave chan struct{} // wakes the job loop to write the runs that changed (tell)

	books   map[string]*Book
	names   []string        // the books' workloads, sorted (workloadNames)
	unsaved map[string]bool // touched books the saver has not taken yet
	leading bool
	lead    uint64 // counts the times this arbiter took the lead, so a plan knows its books
	// epoch is the lease's epoch when this arbiter took the lead: every value it writes carries
	// it, and a write under any other is refused (books.write).
	epoch uint64
	// isLeader is leading, for Leading to read without the lock.
	isLeader atomic.Bool
	// resp answers reclaims from the last full pass's planner.
	resp responder
	// truth is which report last observed each group; reportSeq numbers the reports, and is
	// read and counted without the lock (books.numberReport).
	truth     truth
	reportSeq atomic.Uint64
	// reported are the market's counts of each reported group as settle last read them, of the
	// reports numbered reportedVer (market.countsSince).
	reported    map[actuate.Group]counts
	reportedVer uint64
	// jobs are the deadline-bound jobs (bursar.yaml's and submitted ones; see jobtable.go).
	jobs jobTable
	// badSpecs are the submission keys found holding something else, by the revision found;
	// the leader writes the job's submission back over them (books.restoreSpecs).
	badSpecs map[string]uint64
}
