package reclaim

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestHealthLogsOnStateChangeAndBacksOff(t *testing.T) {
	var buf bytes.Buffer
	h := health{log: slog.New(slog.NewTextHandler(&buf, nil)), what: "test"}
	var delays []time.Duration
	for range 10 {
		delays = append(delays, h.failed(errors.New("no metadata service")))
	}
	if got := strings.Count(buf.String(), "poll failed"); got != 4 { // failures 1, 2, 4, 8
		t.Errorf("logged %d failures of 10, want 4:\n%s", got, buf.String())
	}
	ceilings := []time.Duration{1, 2, 4, 8, 16, 30, 30, 30, 30, 30}
	for i, d := range delays { // jittered: in the upper half of the ceiling
		if c := ceilings[i] * time.Second; d < c-c/2 || d > c {
			t.Errorf("delay after failure %d = %v, want within [%v, %v]", i+1, d, c-c/2, c)
		}
	}
	h.ok()
	h.ok()
	if got := strings.Count(buf.String(), "recovered"); got != 1 {
		t.Errorf("logged %d recoveries, want 1", got)
	}
	if d := h.failed(errors.New("again")); d > time.Second {
		t.Errorf("delay after recovery and a new failure = %v: backoff did not reset", d)
	}
}

// TestEveryBacksOffWhilePollsFail: failed polls in a row space the next ones out beyond the
// interval, jittered (watchers that lost the metadata service together spread apart), and
// a success brings the interval back.
func TestEveryBacksOffWhilePollsFail(t *testing.T) {
	const watchers = 5
	firstWaits := map[time.Duration]bool{}
	for range watchers {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var calls []time.Time
			poll := func(context.Context) error {
				calls = append(calls, time.Now())
				switch {
				case len(calls) == 8:
					cancel()
				case len(calls) <= 6:
					return errors.New("no metadata service")
				}
				return nil
			}
			if err := every(ctx, time.Second, Deps{Logger: slog.New(slog.DiscardHandler)}, "test", poll); err != nil {
				t.Fatal(err)
			}
			// Waits after failures 1..6 have ceilings 1, 2, 4, 8, 16, 30 s, none below the interval;
			// after the success at call 7 the interval is back.
			ceilings := []time.Duration{1, 2, 4, 8, 16, 30}
			for i, c := range ceilings {
				c *= time.Second
				if gap := calls[i+1].Sub(calls[i]); gap < max(c-c/2, time.Second) || gap > c {
					t.Errorf("wait after failure %d = %v, want within [%v, %v]", i+1, gap, max(c-c/2, time.Second), c)
				}
			}
			if gap := calls[7].Sub(calls[6]); gap != time.Second {
				t.Errorf("wait after a success = %v, want the 1s interval", gap)
			}
			firstWaits[calls[2].Sub(calls[1])] = true
		})
	}
	if len(firstWaits) < 2 {
		t.Errorf("%d watchers failing together all waited %v: no jitter", watchers, firstWaits)
	}
}

// TestEveryCountsPollsInMetrics: each poll counts under its outcome, the failures in a row show
// while they last and go back to 0, and the last success carries the clock's time.
func TestEveryCountsPollsInMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	at := time.Date(2026, 9, 13, 12, 0, 0, 0, time.UTC)
	d := Deps{Metrics: NewMetrics(reg), Now: func() time.Time { return at }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	results := []error{errors.New("no metadata service"), errors.New("no metadata service"), nil, errors.New("again")}
	var failingAfter []float64
	calls := 0
	poll := func(context.Context) error {
		if calls > 0 {
			failingAfter = append(failingAfter, testutil.ToFloat64(d.Metrics.failing.WithLabelValues("aws_imds")))
		}
		if calls == len(results) {
			cancel()
			return nil
		}
		calls++
		return results[calls-1]
	}
	synctest.Test(t, func(t *testing.T) {
		if err := every(ctx, time.Second, d, "aws_imds", poll); err != nil {
			t.Fatal(err)
		}
	})
	if want := []float64{1, 2, 0, 1}; !slices.Equal(failingAfter, want) {
		t.Errorf("failures in a row after each poll = %v, want %v", failingAfter, want)
	}
	for outcome, want := range map[string]float64{"ok": 2, "error": 3} {
		if got := testutil.ToFloat64(d.Metrics.polls.WithLabelValues("aws_imds", outcome)); got != want {
			t.Errorf("polls %s = %v, want %v", outcome, got, want)
		}
	}
	if got := testutil.ToFloat64(d.Metrics.lastSuccess.WithLabelValues("aws_imds")); got != float64(at.Unix()) {
		t.Errorf("last success = %v, want %v", got, at.Unix())
	}
}
