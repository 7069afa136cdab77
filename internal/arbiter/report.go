package arbiter

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/events"
)

// reportLoop polls the actuators while leading and publishes what runs as replica.state; the
// leader folds the reports at once, without waiting for them to come back through the stream.
func (s *Service) reportLoop(ctx context.Context) {
	rep, ok := s.o.Actuator.(actuate.Reporter)
	if !ok {
		return
	}
	t := time.NewTicker(s.o.ReportEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if s.Leading() {
				s.report(ctx, rep)
			}
		}
	}
}

func (s *Service) report(ctx context.Context, rep actuate.Reporter) {
	cctx, cancel := context.WithTimeout(ctx, s.o.ReportEvery)
	defer cancel()
	seq := s.bk.numberReport()
	obs, err := rep.Observe(cctx)
	if err != nil {
		s.log.Warn("observing the fleet", "err", err)
	}
	now := s.o.Clock.Now()
	all := obs
	if err == nil {
		var absent []actuate.Observed
		s.bk.with(func(l *ledger) { absent = l.absent(obs) })
		all = append(slices.Clone(obs), absent...)
	}
	s.mk.observe(all, now)
	s.bk.with(func(l *ledger) { l.noteReport(all, seq) })
	if slices.ContainsFunc(obs, func(o actuate.Observed) bool { return o.Pending > 0 && o.Reason == actuate.ReasonNoCapacity }) {
		signal(s.urgent) // a launch found no capacity: give it up and place it elsewhere now
	}
	prices := s.mk.prices()
	for _, o := range obs {
		if !s.empties.due(o, now) {
			continue
		}
		e := &events.ReplicaState{Meta: events.Meta{At: now}, Workload: o.Workload, Location: o.Location,
			Market: o.Market, Offer: o.Offer, Desired: o.Desired, Ready: o.Ready, Instances: o.Instances}
		if p, ok := prices[o.Offer]; ok {
			e.Provider, e.GPUModel, e.GPUs, e.USDPerHour = p.provider, p.model, p.gpus, p.price
		}
		if e.Provider == "" {
			if l, ok := s.o.Config.Location(o.Location); ok {
				e.Provider = l.Provider
			}
		}
		if s.ann.publish(e, "group", o.Group.String()) {
			s.empties.sent(o, now)
		}
	}
}

// emptyEvery is how often an empty group's state is published again after it emptied.
const emptyEvery = 15 * time.Minute

// empties remembers each group's last published state, when it ran something or was empty. An
// actuator keeps reporting every group it ever ran (a Deployment scaled to zero, the sim's every
// placement), and most of a large fleet's groups are empty: their state is published when they
// empty and then every emptyEvery, not at every report. A group silent that long counts as gone
// to the history's readers (docs/anomalies.md), which is what an empty one is; the repeat heals a
// lost publish.
type empties struct {
	mu   sync.Mutex
	last map[actuate.Group]published
}

type published struct {
	at    time.Time
	empty bool
}

// due says whether o's state is to be published at now.
func (e *empties) due(o actuate.Observed, now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	prev, ok := e.last[o.Group]
	// A state is its group's at a time (events.ID): an empty one published at the time of the
	// running one would be dropped as its copy, so that one waits for the next report's time.
	return !isEmpty(o) || !ok || !prev.empty || now.Before(prev.at) || now.Sub(prev.at) >= emptyEvery
}

// sent remembers that o's state was handed to the bus at now. An empty state published at the
// time of a running one is not remembered: it carries the running one's id.
func (e *empties) sent(o actuate.Observed, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.last == nil {
		e.last = map[actuate.Group]published{}
	}
	empty := isEmpty(o)
	if prev, ok := e.last[o.Group]; empty && ok && !prev.empty && prev.at.Equal(now) {
		return
	}
	e.last[o.Group] = published{at: now, empty: empty}
}

// isEmpty says whether a group runs nothing: nothing desired, ready, starting or pending.
func isEmpty(o actuate.Observed) bool {
	return o.Desired == 0 && o.Ready == 0 && o.Pending == 0 && len(o.Instances) == 0 && len(o.Starting) == 0
}
