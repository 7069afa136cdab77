package arbiter

import (
	"context"
	"slices"
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
		s.ann.publish(e, "group", o.Group.String())
	}
}
