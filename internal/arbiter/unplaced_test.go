package arbiter_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/testkit"
)

// unplacedYAML adds to the harness fleet a workload on A100s, which the harness never prices.
const unplacedYAML = fleetYAML + `  - name: nowhere
    gpu: {models: [A100-80GB], count: 1}
    replicas: {min: 1}
`

// TestWorkloadThatPlacesNowhereIsWarnedOnce: a workload whose GPUs no offer carries places
// nothing; the arbiter says so at WARN, with why, once rather than on every pass.
func TestWorkloadThatPlacesNowhereIsWarnedOnce(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, unplacedYAML)
	var log testkit.Log
	id := h.price("us-east-1a", events.Spot, 1.0)
	r := h.start("a1", func(o *arbiter.Options) {
		o.Log = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))
	})
	eventually(t, "the arbiter leads", r.Leading)
	eventually(t, "the price is folded", func() bool { return r.KnowsPrice(id, 1.0) })
	for range 3 {
		r.Pass(ctx)
	}
	var warned []string
	for _, l := range strings.Split(log.String(), "\n") {
		if strings.Contains(l, "can place no replica") {
			warned = append(warned, l)
		}
	}
	if len(warned) != 1 {
		t.Fatalf("warned %d times over 3 passes, want once:\n%s", len(warned), log.String())
	}
	for _, want := range []string{"level=WARN", "workload=nowhere", "no offer fits its GPU models"} {
		if !strings.Contains(warned[0], want) {
			t.Errorf("warning %q does not contain %q", warned[0], want)
		}
	}
	if strings.Contains(log.String(), "workload=svc") {
		t.Errorf("warned of svc, which places:\n%s", log.String())
	}
}
