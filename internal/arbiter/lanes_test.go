package arbiter_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/webhook"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/events"
)

// hangingHook is a webhook receiver that never answers until released: a location whose
// provisioning endpoint hangs.
type hangingHook struct {
	hit     chan struct{}
	release chan struct{}
}

func (h *hangingHook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case h.hit <- struct{}{}:
	default:
	}
	select {
	case <-h.release:
	case <-r.Context().Done():
	}
	http.Error(w, "gave up hanging", http.StatusServiceUnavailable)
}

// A workload placed in two locations, one of whose webhook hangs: the healthy location's actions
// reach its actuator while the other's call hangs, where before they waited behind it (a minute a
// try, five tries).
func TestAHangingLocationDoesNotStallTheOthers(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, fleetYAML)
	hang := &hangingHook{hit: make(chan struct{}, 1), release: make(chan struct{})}
	srv := httptest.NewServer(hang)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(hang.release) }) // runs before srv.Close
	hook := &webhook.Hook{URL: srv.URL, Secret: []byte("a-secret-for-the-hanging-hook")}
	ids := []string{h.price("us-east-1a", events.Spot, 1.0), h.price("us-east-1b", events.Spot, 1.1)}
	r := h.start("a1", func(o *arbiter.Options) { o.Actuator = actuate.Router{"a": hook, "b": h.sim} })
	eventually(t, "the arbiter leads", r.Leading)
	eventually(t, "the prices are folded", func() bool { return r.KnowsPrice(ids[0], 1.0) && r.KnowsPrice(ids[1], 1.1) })
	r.Pass(ctx)
	await(t, hang.hit, "location a's webhook to be called")
	eventually(t, "location b's launch reaches its actuator while a's hangs", func() bool {
		return slices.ContainsFunc(h.sim.Calls(), func(c actuate.Target) bool { return c.Location == "b" && c.Kind == "launch" })
	})
}
