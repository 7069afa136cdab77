package arbiter

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/placement"
)

// market is what every arbiter (leader or standby) folds from the event streams: offers and their
// prices, reclaim notices, demand from telemetry and what the actuators report running. It is
// shared between the stream followers and the planning loop, in three parts that do not share a
// lock: the offers (the price fold updates them thousands of times a second), telemetry (tmu) and
// the rest (mu), which a reclaim's path reads.
type market struct {
	cfg    *fleet.Config
	offers offers

	tmu        sync.Mutex
	rates      map[string]*rate         // tokens.sample series by location/workload/replica
	byWorkload map[string][]*rate       // the same series by workload
	series     map[string]*demandSeries // demand history and forecast by workload (demand.go)
	util       map[string]gpuUtil       // gpu.sample by location/node/uuid

	mu       sync.Mutex
	history  map[string][]placement.Observation // by offer, added by the leader on reclaims
	notices  map[string]notice                  // by event id
	observed map[actuate.Group]actuate.Observed
	// observedAt is when each group was last observed: a report read back from the bus may
	// arrive after a newer one the leader folded directly, and must not undo it.
	observedAt map[actuate.Group]time.Time
	// observedVer numbers the states of observed, from 1: settling copies the counts it reads
	// (countsSince) only when a report changed them.
	observedVer uint64
	// instance is, by instance or node name, the groups running there, each with whether it was
	// last reported not ready yet there. A node may run replicas of several workloads.
	instance map[string]map[actuate.Group]bool
	seen     map[string]seenSpan // when each instance was first and last reported
	pruned   time.Time           // when seen and instance were last pruned
}

type notice struct {
	e        *events.CapacityReclaimed
	received time.Time // wall clock, for the reaction-time metric
}

type rate struct {
	workload string
	at       time.Time
	tokens   int64 // prompt and generated
	gen      int64 // generated
	requests int64
	tokPerS  float64
	genPerS  float64
	reqPerS  float64
}

type gpuUtil struct {
	location string
	at       time.Time
	pct      float64
}

func newMarket(cfg *fleet.Config) *market {
	return &market{cfg: cfg, history: map[string][]placement.Observation{},
		notices: map[string]notice{}, observed: map[actuate.Group]actuate.Observed{}, observedAt: map[actuate.Group]time.Time{},
		observedVer: 1, instance: map[string]map[actuate.Group]bool{}, seen: map[string]seenSpan{}, rates: map[string]*rate{},
		byWorkload: map[string][]*rate{}, series: map[string]*demandSeries{}, util: map[string]gpuUtil{}}
}

// offerID names an offer the way every arbiter names it, from what a price event says.
func offerID(p *events.PriceObserved, location string) string {
	zone := p.Zone
	if zone == "" {
		zone = "-"
	}
	return location + "/" + zone + "/" + p.InstanceType + "/" + string(p.Market)
}

// price folds a price event. It reports whether the estate's prices changed.
func (m *market) price(p *events.PriceObserved) bool {
	loc, ok := m.cfg.Match(p.Provider, p.Region, p.Zone)
	if !ok {
		return false
	}
	return m.offers.set(&placement.Offer{ID: offerID(p, loc.Name), Location: loc.Name, InstanceType: p.InstanceType,
		GPUModel: p.GPUModel, GPUCount: p.GPUCount, GPUMemoryGB: p.GPUMemoryGB, Market: placement.Market(p.Market),
		PricePerHour: p.USDPerHour})
}

// reclaim keeps a notice until its deadline has passed.
func (m *market) reclaim(e *events.CapacityReclaimed, received time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.notices[e.ID]; !ok {
		m.notices[e.ID] = notice{e: e, received: received}
	}
}

// replicaState folds a report of what runs read back from the bus. Only one newer than the
// report held counts: one made at the same time is the leader's own, folded directly when it was
// made and fuller (pending launches and why); on a stepped clock its copy comes back in the
// middle of the next round's plan, and must not hide a launch that found no capacity.
func (m *market) replicaState(e *events.ReplicaState) {
	m.fold([]actuate.Observed{{Group: actuate.Group{Workload: e.Workload, Location: e.Location, Market: e.Market},
		Offer: e.Offer, Desired: e.Desired, Ready: e.Ready}}, e.At, true)
}

// observe folds actuator reports made at a time; instance names, when given, index where each
// group runs. A report older than the one held for a group is ignored.
func (m *market) observe(obs []actuate.Observed, at time.Time) { m.fold(obs, at, false) }

// fold is observe; newerOnly also ignores a report made at the time of the one held.
func (m *market) fold(obs []actuate.Observed, at time.Time, newerOnly bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, o := range obs {
		if held := m.observedAt[o.Group]; at.Before(held) || (newerOnly && at.Equal(held)) {
			continue
		}
		m.observedAt[o.Group] = at
		m.observedVer++
		if o.Instances == nil && o.Starting == nil {
			o.Instances, o.Starting = m.observed[o.Group].Instances, m.observed[o.Group].Starting
		}
		m.observed[o.Group] = o
		for _, in := range o.Instances {
			m.place(in, o.Group, false)
			m.saw(in, at)
		}
		for _, in := range o.Starting {
			m.place(in, o.Group, true)
			m.saw(in, at)
		}
	}
	m.prune(at)
}

// place records that group g runs on instance in. The groups there whose own last report no
// longer names it have moved off it; a group whose report dropped it while no other group
// replaced it keeps it, so a notice racing the report (the node draining) still finds its
// workload. m.mu is held.
func (m *market) place(in string, g actuate.Group, starting bool) {
	there := m.instance[in]
	if there == nil {
		there = map[actuate.Group]bool{}
		m.instance[in] = there
	}
	for other := range there {
		if o := m.observed[other]; other != g && !slices.Contains(o.Instances, in) && !slices.Contains(o.Starting, in) {
			delete(there, other)
		}
	}
	there[g] = starting
}

// seenSpan is when an instance was first and last in a report.
type seenSpan struct{ first, last time.Time }

func (m *market) saw(in string, at time.Time) {
	sp, ok := m.seen[in]
	if !ok {
		sp.first = at
	}
	if at.After(sp.last) {
		sp.last = at
	}
	m.seen[in] = sp
}

// prune forgets, once an hour, the instances no report has named for historyMemory: a notice
// comes long before that.
func (m *market) prune(now time.Time) {
	if now.Sub(m.pruned) < time.Hour {
		return
	}
	m.pruned = now
	for in, sp := range m.seen {
		if now.Sub(sp.last) > historyMemory {
			delete(m.seen, in)
			delete(m.instance, in)
		}
	}
}

// The most one replica's counters can plausibly rise per second. A faster rise is no traffic but a
// bad series: two scrape targets sharing a replica name, or a counter that restarted without the
// reset being seen. Folded in, one such sample asked for millions of replicas.
const (
	maxTokensPerSecond   = 1_000_000
	maxRequestsPerSecond = 10_000
)

// tokens folds a tokens.sample into a per-replica rate. A sample whose rise since the last one is
// above what a replica can serve is not folded into demand: it is returned as an error (to be
// logged with the sample), and becomes the series' new starting point, as a reset would.
func (m *market) tokens(e *events.TokensSample) error {
	key := e.Location + "/" + e.Workload + "/" + e.Replica
	m.tmu.Lock()
	defer m.tmu.Unlock()
	r, ok := m.rates[key]
	tok := e.PromptTokens + e.GenerationTokens
	var bad error
	if ok && !e.Reset && e.At.After(r.at) && tok >= r.tokens && e.GenerationTokens >= r.gen && e.Requests >= r.requests {
		dt := e.At.Sub(r.at).Seconds()
		tps, rps := float64(tok-r.tokens)/dt, float64(e.Requests-r.requests)/dt
		if tps > maxTokensPerSecond || rps > maxRequestsPerSecond {
			bad = fmt.Errorf("replica %s of workload %s at %s rose %.0f tokens/s and %.0f requests/s over %gs, above the %d and %d one replica can serve; check that no two scrape targets share a replica name",
				e.Replica, e.Workload, e.Location, tps, rps, dt, maxTokensPerSecond, maxRequestsPerSecond)
		} else {
			r.tokPerS, r.genPerS, r.reqPerS = tps, float64(e.GenerationTokens-r.gen)/dt, rps
		}
	}
	if !ok {
		r = &rate{workload: e.Workload}
		m.rates[key] = r
		m.byWorkload[e.Workload] = append(m.byWorkload[e.Workload], r)
	}
	if !ok || e.At.After(r.at) {
		r.at, r.tokens, r.gen, r.requests = e.At, tok, e.GenerationTokens, e.Requests
	}
	if m.cfg != nil {
		m.stepDemand(e.Workload, e.At)
	}
	return bad
}

// gpu folds a gpu.sample.
func (m *market) gpu(e *events.GPUSample) {
	m.tmu.Lock()
	defer m.tmu.Unlock()
	m.util[e.Location+"/"+e.Node+"/"+e.UUID] = gpuUtil{location: e.Location, at: e.At, pct: e.UtilizationPct}
}

// staleAfter is how old a telemetry sample may be and still count as current demand.
const staleAfter = 5 * time.Minute

// current says whether a sample made at at counts as current demand at now: no older than
// staleAfter, and not dated ahead of now by more than events.MaxSkew (a wrong clock or a
// forgery, which would otherwise count as current until its time had passed).
func current(at, now time.Time) bool {
	return now.Sub(at) <= staleAfter && !at.After(now.Add(events.MaxSkew))
}

// demand is how many ready replicas w's traffic needs now, from its scaling metric; 0 when there
// is no metric or no current sample. It takes mu (it reads where w runs), then tmu.
func (m *market) demand(w *fleet.Workload, ready int, now time.Time) int {
	s := w.Scaling
	if s.Metric == "" || s.PerReplica <= 0 {
		return 0
	}
	total, seen := 0.0, false
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tmu.Lock()
	defer m.tmu.Unlock()
	switch s.Metric {
	case fleet.MetricTokens, fleet.MetricOutputTokens, fleet.MetricRequests:
		total, seen = m.sumRates(w, now)
	case fleet.MetricUtilization:
		// gpu.sample carries no workload: the mean utilization of the GPUs at the locations the
		// workload runs in stands in for its own, scaled by its ready replicas.
		sum, n := 0.0, 0
		for _, u := range m.util {
			if current(u.at, now) && m.runsAt(w.Name, u.location) {
				sum, n = sum+u.pct, n+1
			}
		}
		if n > 0 {
			seen, total = true, sum/float64(n)*float64(ready)
		}
	}
	if !seen {
		return 0
	}
	n, limit := math.Ceil(total/s.PerReplica-1e-9), m.demandLimit(ready)
	if !(n < float64(limit)) { // NaN or beyond what the fleet can run
		return limit
	}
	return int(n)
}

// demandLimit is the most replicas demand may ask for: the planner's limit per workload, and,
// where every location gives a capacity hint, the ready replicas plus that room.
func (m *market) demandLimit(ready int) int {
	if m.cfg == nil || len(m.cfg.Locations) == 0 {
		return placement.MaxReplicas
	}
	room := 0
	for _, l := range m.cfg.Locations {
		if l.Capacity <= 0 {
			return placement.MaxReplicas
		}
		room += l.Capacity
	}
	return min(placement.MaxReplicas, ready+room)
}

// runsAt says whether a report has workload running at location; m.mu is held.
func (m *market) runsAt(workload, location string) bool {
	for g := range m.observed {
		if g.Workload == workload && g.Location == location {
			return true
		}
	}
	return false
}

// The questions the planner and the books ask of the market and the observations they hand it,
// each under mu: nothing outside this file reaches the market's maps.

// learn adds an observation of offer to its history, for the planner's hazard: a preemption, a
// launch that found no capacity, a spot replica that ended on our terms.
func (m *market) learn(offer string, ob placement.Observation) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.history[offer] = append(m.history[offer], ob)
}

// withHistory gives each offer a copy of its history, forgetting what is older than
// historyMemory: the plan may be computed after mu is released, while reclaims add more.
func (m *market) withHistory(offers []placement.Offer, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range offers {
		id := offers[i].ID
		m.history[id] = forget(m.history[id], now)
		offers[i].History = slices.Clone(m.history[id])
	}
}

// hasNotice says whether reclaim notice id is held.
func (m *market) hasNotice(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.notices[id]
	return ok
}

// liveNotices are the notices held, in no order; those whose deadline passed over an hour ago
// are forgotten. One past its deadline by less still takes its replicas (a zero notice).
func (m *market) liveNotices(now time.Time) []notice {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []notice
	for id, n := range m.notices {
		if now.Sub(n.e.Deadline) > time.Hour {
			delete(m.notices, id)
			continue
		}
		out = append(out, n)
	}
	return out
}

// firstReceived is when the earliest held notice of ids reached us; zero when none is held.
func (m *market) firstReceived(ids []string) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	var first time.Time
	for _, id := range ids {
		if n, ok := m.notices[id]; ok && (first.IsZero() || n.received.Before(first)) {
			first = n.received
		}
	}
	return first
}

// counts are what settling reads of a group's last report: its desired and ready replicas, and
// those pending for want of capacity with when they were reported (n 0 for any other reason).
type counts struct {
	desired, ready int
	noCapacity     pendingReport
}

// countsSince returns every reported group's counts and the version of the reports they are of;
// where ver is that version still, it copies nothing and reports false.
func (m *market) countsSince(ver uint64) (map[actuate.Group]counts, uint64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ver == m.observedVer {
		return nil, ver, false
	}
	out := make(map[actuate.Group]counts, len(m.observed))
	for g, o := range m.observed {
		c := counts{desired: o.Desired, ready: o.Ready}
		if o.Pending > 0 && o.Reason == actuate.ReasonNoCapacity {
			c.noCapacity = pendingReport{n: o.Pending, at: m.observedAt[g]}
		}
		out[g] = c
	}
	return out, m.observedVer, true
}

// runsSince says whether a report on g made since since holds its count n, running or starting,
// with nothing pending.
func (m *market) runsSince(g actuate.Group, since time.Time, n int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.observed[g]
	return ok && !m.observedAt[g].Before(since) && o.Desired >= n && o.Pending == 0 && o.Ready+len(o.Starting) >= n
}

// occupants are the groups on the instance (or else node) a notice names, in group order; first is
// when the instance was first reported, and named whether the actuator at the notice's location
// names its instances at all.
func (m *market) occupants(n notice) (there []occupant, first time.Time, named bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name := n.e.Instance
	if len(m.instance[name]) == 0 && n.e.Node != "" {
		name = n.e.Node
	}
	for g, starting := range m.instance[name] {
		o := m.observed[g]
		k := max(count(o.Instances, name)+count(o.Starting, name), 1)
		there = append(there, occupant{g: g, n: k, starting: starting})
	}
	slices.SortFunc(there, func(a, b occupant) int { return actuate.CompareGroups(a.g, b.g) })
	return there, m.seen[name].first, m.namesInstancesAt(n.e.Location)
}

// namesInstancesAt says whether the actuator at location reports which instances its groups run
// on (the kube and sim actuators do; a webhook does not). m.mu is held.
func (m *market) namesInstancesAt(location string) bool {
	for g, o := range m.observed {
		if g.Location == location && (o.Instances != nil || o.Starting != nil) {
			return true
		}
	}
	return false
}

// digest prints everything the market holds, in a stable order: two equal digests mean no event
// changed the market (the tests' View).
func (m *market) digest() string {
	var b strings.Builder
	fmt.Fprintf(&b, "offers %+v\n", m.offers.all())
	m.mu.Lock()
	fmt.Fprintf(&b, "observed %+v at %v\nnotices %d\ninstances %v\nseen %v\n",
		m.observed, m.observedAt, len(m.notices), m.instance, m.seen)
	m.mu.Unlock()
	m.tmu.Lock()
	defer m.tmu.Unlock()
	for _, k := range slices.Sorted(maps.Keys(m.rates)) {
		fmt.Fprintf(&b, "rate %s %+v\n", k, *m.rates[k])
	}
	fmt.Fprintf(&b, "util %+v\n", m.util)
	return b.String()
}

type offerPrice struct {
	provider, model string
	gpus            int
	price           float64
}

// prices are the offers seen, by id, with the provider of their location.
func (m *market) prices() map[string]offerPrice {
	out := map[string]offerPrice{}
	for _, o := range m.offers.all() {
		p := offerPrice{model: o.GPUModel, gpus: o.GPUCount, price: o.PricePerHour}
		if l, ok := m.cfg.Location(o.Location); ok {
			p.provider = l.Provider
		}
		out[o.ID] = p
	}
	return out
}

// groups is what the actuators last reported of every group, in no order.
func (m *market) groups() []actuate.Observed {
	m.mu.Lock()
	defer m.mu.Unlock()
	obs := make([]actuate.Observed, 0, len(m.observed))
	for _, o := range m.observed {
		obs = append(obs, o)
	}
	return obs
}
