package arbiter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/sim"
	"github.com/bursar-dev/bursar/internal/arbiter"
	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/slack/slacktest"
)

// logBuffer is a slog JSON log in memory, safe for the arbiter's goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines decodes the log's records at INFO whose message is one of msgs.
func (l *logBuffer) lines(t *testing.T, msgs ...string) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, ln := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(ln), &rec); err != nil {
			t.Fatalf("log line %q: %v", ln, err)
		}
		if rec["level"] == "INFO" && slices.Contains(msgs, rec["msg"].(string)) {
			out = append(out, rec)
		}
	}
	return out
}

// outcomeMsg is the log message each outcome step is told with.
func outcomeMsg(e *events.ActionUpdated) string {
	switch {
	case e.Status == events.ActionApplied:
		return "action applied"
	case e.Status == events.ActionFailed:
		return "action failed"
	case e.Status == events.ActionAwaitingApproval:
		return "action held for approval"
	case e.Status == events.ActionRejected:
		return "action rejected"
	case e.Status == events.ActionProposed && e.Reason == arbiter.ReasonLaunchFailed:
		return "launch given up"
	}
	return ""
}

// refusingLaunches is a sim location whose provider does not know the group it is asked to grow.
type refusingLaunches struct{ *sim.Fleet }

func (f refusingLaunches) Scale(ctx context.Context, t actuate.Target) error {
	if t.Kind == "launch" {
		return fmt.Errorf("scaling %s: %w", t.Group, actuate.ErrNotFound)
	}
	return f.Fleet.Scale(ctx, t)
}

// TestEachOutcomeIsOneInfoLine: every action applied, failed, held or given up is told in one
// INFO line naming the workload, where, why and the change in cost per hour, and nothing else
// (retries, proposals) is: the lines and the outcome events published match one to one.
func TestEachOutcomeIsOneInfoLine(t *testing.T) {
	tests := []struct {
		name string
		want []string // outcomes that must occur
		run  func(t *testing.T, h *harness)
	}{
		{name: "launches applied, one given up for want of capacity", want: []string{"action applied", "launch given up"},
			run: func(t *testing.T, h *harness) {
				h.sim.SetCapacity("a", 0)
				r := h.startPriced(t, nil)
				for range 5 {
					h.settle(context.Background(), r)
					h.clock.Advance(31 * time.Second)
				}
			}},
		{name: "launches the provider refuses fail", want: []string{"action failed"},
			run: func(t *testing.T, h *harness) {
				r := h.startPriced(t, func(o *arbiter.Options) {
					o.Actuator = actuate.Router{"a": refusingLaunches{h.sim}, "b": refusingLaunches{h.sim}}
				})
				h.settle(context.Background(), r)
			}},
		{name: "a cut held, then approved from the console", want: []string{"action held for approval", "action applied"},
			run: func(t *testing.T, h *harness) {
				ctx := context.Background()
				br := &budgetRig{harness: h, slack: slacktest.New(t, slackToken)}
				br.setPolicy(t, floorPolicy)
				br.proc = br.startProc(t, "a1")
				r := br.proc.r
				ids := []string{br.price("us-east-1a", events.Spot, 1.0), br.price("us-east-1b", events.Spot, 1.1)}
				eventually(t, "the prices are folded", func() bool { return r.KnowsPrice(ids[0], 1.0) && r.KnowsPrice(ids[1], 1.1) })
				br.settle(ctx, r)
				br.clock.Advance(31 * time.Second) // ready: spending from now
				br.settle(ctx, r)
				br.clock.Advance(time.Hour)
				r.Report(ctx)
				eventually(t, "the cut is asked for", func() bool { r.Pass(ctx); return len(br.proc.approvals.Pending()) == 1 })
				hold := br.asked(t, 1)[0]
				if err := br.proc.approvals.DecideAs(ctx, hold, true, approver); err != nil {
					t.Fatal(err)
				}
				eventually(t, "the cut is applied", func() bool { return len(br.awaiting("svc", hold)) == 0 && r.InFlight() == 0 })
				br.settle(ctx, r)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, fleetYAML)
			logs := &logBuffer{}
			h.log = slog.New(slog.NewJSONHandler(logs, nil))
			updates := h.watchActions(t, 256, func(*events.ActionUpdated) bool { return true })
			tt.run(t, h)
			checkOutcomeLines(t, logs, updates, tt.want)
		})
	}
}

// startPriced starts an arbiter that leads and knows the prices of on-demand in zone a and spot
// in both zones, a's cheapest.
func (h *harness) startPriced(t *testing.T, tweak func(*arbiter.Options)) *running {
	t.Helper()
	prices := map[string]float64{h.price("us-east-1a", events.OnDemand, 3.0): 3.0,
		h.price("us-east-1a", events.Spot, 1.0): 1.0, h.price("us-east-1b", events.Spot, 1.1): 1.1}
	r := h.start("a1", tweak)
	eventually(t, "the arbiter leads", r.Leading)
	eventually(t, "the prices are folded", func() bool {
		for id, p := range prices {
			if !r.KnowsPrice(id, p) {
				return false
			}
		}
		return true
	})
	return r
}

// checkOutcomeLines matches the INFO lines to the outcome events, one to one, field by field.
func checkOutcomeLines(t *testing.T, logs *logBuffer, updates chan *events.ActionUpdated, want []string) {
	t.Helper()
	msgs := []string{"action applied", "action failed", "action held for approval", "action rejected", "launch given up"}
	var outcomes []*events.ActionUpdated
	var lines []map[string]any
	// A step is one fact however often it is published (the approvals publish a hold's steps as
	// the arbiter does, under the same event id, and the stream keeps one).
	facts := map[string]bool{}
	deadline := time.Now().Add(10 * time.Second)
	for {
		for len(updates) > 0 {
			e := <-updates
			if fact := e.ActionID + "/" + string(e.Status); outcomeMsg(e) != "" && !facts[fact] {
				facts[fact] = true
				outcomes = append(outcomes, e)
			}
		}
		lines = logs.lines(t, msgs...)
		if len(lines) == len(outcomes) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(lines) != len(outcomes) {
		t.Errorf("%d outcome lines for %d outcome events", len(lines), len(outcomes))
	}
	seen := map[string]bool{}
	for _, e := range outcomes {
		msg := outcomeMsg(e)
		seen[msg] = true
		i := slices.IndexFunc(lines, func(l map[string]any) bool { return l["msg"] == msg && l["action"] == e.ActionID })
		if i < 0 {
			t.Errorf("no %q line for action %s (%s %s at %s)", msg, e.ActionID, e.Kind, e.Reason, e.Location)
			continue
		}
		l := lines[i]
		lines = slices.Delete(lines, i, i+1)
		for k, v := range map[string]string{"workload": e.Workload, "location": e.Location, "offer": e.Offer,
			"market": string(e.Market), "reason": e.Reason, "kind": e.Kind} {
			if l[k] != v {
				t.Errorf("%q line of action %s: %s = %v, want %q", msg, e.ActionID, k, l[k], v)
			}
		}
		change, ok := l["usd_per_hour_change"].(float64)
		if !ok || (e.Kind == "launch" && change <= 0) || (e.Reason == arbiter.ReasonLaunchFailed && change >= 0) {
			t.Errorf("%q line of action %s (%s): usd_per_hour_change = %v", msg, e.ActionID, e.Kind, l["usd_per_hour_change"])
		}
		if e.Status == events.ActionFailed && l["detail"] == nil {
			t.Errorf("failed action %s's line does not say why: %v", e.ActionID, l)
		}
	}
	for _, l := range lines {
		t.Errorf("an outcome line no event matches: %v", l)
	}
	for _, w := range want {
		if !seen[w] {
			t.Errorf("no %q outcome: the scenario shows nothing", w)
		}
	}
}
