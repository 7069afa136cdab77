package arbiter

import (
	"log/slog"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/fleet"
)

type standing time.Time

func (c standing) Now() time.Time { return time.Time(c) }

func gpuAt(at time.Time, uuid string, pct float64) *events.GPUSample {
	return &events.GPUSample{Meta: events.Meta{ID: uuid + "@" + at.String(), At: at}, Location: "a", Node: "n",
		UUID: uuid, Model: "H100", UtilizationPct: pct, MemoryTotalBytes: 1}
}

// TestASampleDatedAheadIsNotCurrentDemand (issue 27): one gpu.sample dated 2099 counted as
// current for as long as the arbiter ran (its age was negative), and held its workload at the
// maximum. Staleness applies to the past; a sample dated more than events.MaxSkew ahead is not
// current, whether it reached the market view or not.
func TestASampleDatedAheadIsNotCurrentDemand(t *testing.T) {
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	w := &fleet.Workload{Name: "svc", Scaling: fleet.Scaling{Metric: fleet.MetricUtilization, PerReplica: 10}}
	tests := []struct {
		name string
		at   time.Time
		want int
	}{
		{"a current sample", now.Add(-time.Minute), 40},
		{"within the skew", now.Add(events.MaxSkew), 40},
		{"dated 2099", time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC), 0},
		{"an hour ahead", now.Add(time.Hour), 0},
		{"stale", now.Add(-staleAfter - time.Second), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMarket(&fleet.Config{})
			m.observe([]actuate.Observed{{Group: actuate.Group{Workload: "svc", Location: "a", Market: events.Spot}, Ready: 4}}, now)
			m.gpu(gpuAt(tt.at, "g1", 100))
			got := m.demand(w, 4, now)
			if got != tt.want {
				t.Errorf("demand = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestAnEventDatedAheadIsNotFolded: the arbiter skips an event dated more than events.MaxSkew
// after its clock: a tokens.sample from 2099 would otherwise become its series' latest and
// every real sample after it would be taken for an older one.
func TestAnEventDatedAheadIsNotFolded(t *testing.T) {
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	s := &inputs{clock: standing(now), log: slog.New(slog.DiscardHandler), m: newMetrics(nil),
		mk: newMarket(&fleet.Config{}), urgent: make(chan struct{}, 1), changed: make(chan struct{}, 1)}
	take(t, s, gpuAt(time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC), "ahead", 100))
	take(t, s, tokensAt(time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC), "r1", 1e6, 10))
	take(t, s, gpuAt(now.Add(events.MaxSkew), "within", 50))
	if _, ok := s.mk.util["a/n/ahead"]; ok {
		t.Error("the gpu.sample dated 2099 was folded")
	}
	if _, ok := s.mk.rates["a/svc/r1"]; ok {
		t.Error("the tokens.sample dated 2099 was folded")
	}
	if _, ok := s.mk.util["a/n/within"]; !ok {
		t.Error("the gpu.sample within the skew was not folded")
	}
}

// take hands e to the service as a message on its own subject would.
func take(t *testing.T, in *inputs, e events.Event) {
	t.Helper()
	if err := in.take(e, e.Subject()); err != nil {
		t.Fatalf("take %s: %v", e.EventType(), err)
	}
}
