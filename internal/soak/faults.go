package soak

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/testkit"
)

// kind is a fault the soak injects.
type kind string

const (
	killLeader   kind = "kill -9 of the leading arbiter, in the middle of its round"
	killStandby  kind = "kill -9 of the standby arbiter"
	killRecorder kind = "recorder killed mid-batch"
	stopNode     kind = "NATS node stopped, then restarted"
	cutNode      kind = "NATS node cut off from the others for 10 s"
	storeDown    kind = "history store failing every write"
	slowKV       kind = "placement KV writes slowed to 500 ms"
	damageNode   kind = "NATS node stopped, 16 KiB of garbage written into its TELEMETRY block, restarted"
	slackDown    kind = "Slack answering in 10 s, then refusing (429 ratelimited with Retry-After, 503)"
)

// kinds are the faults drawn into the window; slackDown goes into the warm-up (slackFault).
var kinds = []kind{killLeader, killStandby, killRecorder, stopNode, cutNode, storeDown, slowKV, damageNode}

// lasts is how many ticks (30 s of market each) a fault lasts before it is undone.
var lasts = map[kind]int{killLeader: 60, killStandby: 60, killRecorder: 20, stopNode: 20, cutNode: 20,
	storeDown: 20, slowKV: 10, damageNode: 1}

// fault is one injection: what, when, where, and what it took down.
type fault struct {
	kind   kind
	at     int // tick it starts at
	end    int // tick it is undone at
	mid    int // tick a Slack outage turns from slow to refusing
	node   int // the NATS node, for node faults
	victim *arb
	healed chan struct{} // closed when a cut is healed
	began  time.Time     // wall time a store outage began
}

// storeWall is the least wall time the store refuses writes.
const storeWall = 3 * time.Second

// killMidBatch kills the recorder while it holds a batch it could not store: the store refuses
// writes until an insert was refused (or 10 s passed), then the recorder's connection drops.
// A recorder that acked before its insert loses that batch here.
func (r *rig) killMidBatch() {
	before := r.st.refused.Load()
	r.st.failing.Store(true)
	for end := time.Now().Add(10 * time.Second); r.st.refused.Load() == before && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	r.rec.stop()
	r.st.failing.Store(false)
}

// cutWall is how long a node stays cut off, in wall time: the others notice within seconds.
const cutWall = 10 * time.Second

// schedule draws the faults of a window of ticks from seed: every kind once, in a random
// order, each in its own slot of the window, at a random point of its first half.
func schedule(seed uint64, window int) []fault {
	rng := rand.New(rand.NewPCG(seed, 0x50a4))
	order := rng.Perm(len(kinds))
	slot := window / (len(kinds) + 1)
	out := make([]fault, 0, len(kinds))
	for i, k := range order {
		at := slot*(i+1) + rng.IntN(max(1, slot/2))
		n := lasts[kinds[k]]
		if n >= slot/2 {
			n = max(1, slot/2)
		}
		out = append(out, fault{kind: kinds[k], at: at, end: at + n, node: rng.IntN(nodes)})
	}
	return out
}

// inject starts or undoes f at tick t; it reports whether it ran the arbiters' round itself.
func (r *rig) inject(ctx context.Context, f *fault, t int) bool {
	switch t {
	case f.at:
		r.note(t, "starts: %s%s", f.kind, r.where(f))
		return r.start(ctx, f)
	case f.end:
		r.undo(ctx, f)
		r.note(t, "ends: %s%s", f.kind, r.where(f))
	case f.mid:
		if f.kind == slackDown {
			r.slack.srv.Refuse()
			r.note(t, "Slack refuses every call from now on (429 ratelimited with Retry-After: 1, and 503)")
		}
	}
	return false
}

// slackFault is the Slack outage of a run whose warm-up begins at tick first: at a seeded tick
// among the warm-up's first four, where the fleet is launched from nothing and the approval
// policy holds the launch, so the outage always meets approval questions (a calm window may ask
// none for hours). The warm-up is not scored, so the questions it makes time out cost the
// availability and cost compared with the calm run nothing; the window then starts from an empty
// fleet in both runs. It is slow for its first 40 ticks (10 s: the first ask's call fails at
// its 10 s deadline as the slow phase ends), then refuses for 24 (the ask is retried and
// refused), 64 ticks in all; the ask, retried once more as Slack is back, is posted before its
// deadline (120 ticks).
func slackFault(seed uint64, first int) fault {
	at := first + rand.New(rand.NewPCG(seed, 0x51ac)).IntN(4)
	return fault{kind: slackDown, at: at, mid: at + 40, end: at + 64}
}

// slackPace is the least wall time a tick takes while Slack is faulty: Slack's delays, the
// arbiters' deadlines on it and their retries (every 5 s) are wall time, so the market slows
// down to let them happen in the fault's minutes of market (64 ticks: 16 s).
const slackPace = 250 * time.Millisecond

// slackAfter is how long, at most, the market stays slow after a Slack fault while holds still
// wait: the asks Slack refused are tried again every 5 s of wall time, and a hold that waited
// through the outage must be asked and decided (or timed out) at the market's pace of the
// outage, not a fast market's, where those seconds are hours.
const slackAfter = 240

// pace makes tick t, begun at start, last slackPace while a Slack fault is on, and after it while
// holds still wait (up to slackAfter ticks).
func (r *rig) pace(start time.Time, t int) {
	for _, f := range r.faults {
		if f.kind == slackDown && f.at <= t && (t < f.end || t < f.end+slackAfter && r.holds.waiting()) {
			time.Sleep(slackPace - time.Since(start))
			return
		}
	}
}

func (r *rig) where(f *fault) string {
	switch f.kind {
	case cutNode: // who is on the cut node matters: a client there stays on it, cut off too
		var on []string
		for _, a := range r.arbs {
			if a.alive {
				on = append(on, fmt.Sprintf("%s on n%d", a.id, r.cl.nodeOf(a.nc)))
			}
		}
		return fmt.Sprintf(" (node n%d; %s)", f.node, strings.Join(on, ", "))
	case stopNode, damageNode:
		return fmt.Sprintf(" (node n%d)", f.node)
	}
	if f.victim != nil {
		return " (" + f.victim.id + ")"
	}
	return ""
}

func (r *rig) start(ctx context.Context, f *fault) bool {
	switch f.kind {
	case killLeader:
		return r.killMidRound(ctx, f)
	case killStandby:
		for _, a := range r.arbs {
			if a.alive && !a.sys.Service.Leading() {
				f.victim = a
				r.kill(a)
				break
			}
		}
	case killRecorder:
		r.stepping(ctx, r.killMidBatch)
	case stopNode:
		r.cl.stop(f.node)
	case cutNode:
		// The cut heals on a wall-clock timer: while no arbiter can renew the lease the market
		// stands still (ensureLeader), so a heal waiting for a later tick would never come.
		r.cl.cut(f.node, true)
		f.healed = make(chan struct{})
		go func() {
			time.Sleep(cutWall)
			r.cl.cut(f.node, false)
			close(f.healed)
		}()
	case storeDown:
		f.began = time.Now()
		r.st.failing.Store(true)
	case slowKV:
		r.books.delay.Store(int64(500 * time.Millisecond))
	case slackDown:
		r.slack.srv.Slow(slackDelay)
	case damageNode:
		r.damage(ctx, f)
	}
	return false
}

// damage stops f's node, writes garbage into its TELEMETRY block and starts it again, and notes
// the stream's state before and after: a damaged replica that comes back short and leads takes
// messages the bus acknowledged to their publishers with it (docs/soak.md), and the note says
// which node led and where the stream ended.
func (r *rig) damage(ctx context.Context, f *fault) {
	before := r.telemetryState(ctx)
	r.cl.stop(f.node)
	r.fail(testkit.Damage(filepath.Join(bus.StreamDir(r.cl.store(f.node), bus.Telemetry), "msgs")))
	r.fail(r.cl.start(f.node))
	r.note(f.at, "TELEMETRY before the damage: %s; after the restart: %s", before, r.telemetryState(ctx))
}

// telemetryState is TELEMETRY's last sequence, message count and leader, as the cluster
// answers within 10 s.
func (r *rig) telemetryState(ctx context.Context) string {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		s, err := r.js.Stream(cctx, bus.Telemetry)
		if err == nil {
			i := s.CachedInfo()
			leader := "none"
			if i.Cluster != nil && i.Cluster.Leader != "" {
				leader = i.Cluster.Leader
			}
			return fmt.Sprintf("last seq %d, %d messages, leader %s", i.State.LastSeq, i.State.Msgs, leader)
		}
		select {
		case <-cctx.Done():
			return "unknown (" + err.Error() + ")"
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// killMidRound runs the leader's round and kills it while the round is under way, then lets
// the others run theirs.
func (r *rig) killMidRound(ctx context.Context, f *fault) bool {
	l := r.leader()
	if l == nil {
		return false
	}
	f.victim = l
	done := make(chan struct{})
	go func() { l.sys.Service.Step(ctx); close(done) }()
	time.Sleep(time.Duration(1+f.at%5) * time.Millisecond)
	l.act.kill()
	l.nc.Close()
	<-done
	r.kill(l)
	for _, a := range r.arbs {
		if a.alive {
			a.sys.Service.Step(ctx)
		}
	}
	return true
}

func (r *rig) undo(ctx context.Context, f *fault) {
	switch f.kind {
	case killLeader, killStandby:
		if f.victim != nil {
			r.fail(r.startArbiter(ctx, f.victim))
		}
	case killRecorder:
		rec, err := r.startRecorder(ctx)
		r.fail(err)
		if err == nil {
			r.rec = rec
		}
	case stopNode:
		r.fail(r.cl.start(f.node))
	case cutNode:
		<-f.healed
	case storeDown:
		if left := storeWall - time.Since(f.began); left > 0 {
			r.stepping(ctx, func() { time.Sleep(left) }) // the recorder meets the outage, whatever the market's pace
		}
		r.st.failing.Store(false)
	case slowKV:
		r.books.delay.Store(0)
	case slackDown:
		r.stepping(ctx, r.slack.srv.Up)
	}
	switch f.kind {
	case stopNode, cutNode, damageNode:
		sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		r.stepping(ctx, func() { r.fail(r.cl.settled(sctx, r.js)) })
		cancel()
	}
}

// stepping runs do, a wait of the rig's in the middle of a tick, while the living arbiters go on
// with their rounds at the same instant every leaseTTL/10, as their own timers would: an arbiter
// not stepped for the lease's TTL loses its lease (it is renewed in Step), and a decision it is
// asked to apply meanwhile (an approval's timeout, swept on the wall clock) finds it deposed.
func (r *rig) stepping(ctx context.Context, do func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(leaseTTL / 10)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			for _, a := range r.arbs {
				if a != nil && a.alive {
					a.sys.Service.Step(ctx)
				}
			}
		}
	})
	do()
	close(done)
	wg.Wait()
}

// note logs a fault with its market time.
func (r *rig) note(t int, format string, args ...any) {
	at := r.now()
	line := fmt.Sprintf(format, args...)
	r.run.timeline = append(r.run.timeline, event{tick: t, at: at, wall: time.Now(), what: line})
	r.log.Info("soak fault "+line, "market_time", at.Format(time.RFC3339), "tick", t)
}
