package recorder

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestRetryBacksOffWithJitter: while the store fails, the waits between attempts grow within
// the upper half of their exponential ceiling up to MaxBackoff, and differ between loops that
// started failing together (each stream's loop would otherwise hit a recovering ClickHouse at
// the same instant).
func TestRetryBacksOffWithJitter(t *testing.T) {
	const loops, failures = 6, 6
	ceilings := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	firstWaits := map[time.Duration]bool{}
	for range loops {
		synctest.Test(t, func(t *testing.T) {
			r := New(nil, nil, Config{MinBackoff: time.Second, MaxBackoff: 10 * time.Second, Registerer: prometheus.NewRegistry()})
			l := &loop{r: r, stream: "TELEMETRY", log: r.cfg.Log}
			var calls []time.Time
			err := l.retry(context.Background(), "insert", func(context.Context) error {
				calls = append(calls, time.Now())
				if len(calls) <= failures {
					return errors.New("clickhouse down")
				}
				return nil
			})
			if err != nil || len(calls) != failures+1 {
				t.Fatalf("err %v after %d calls, want success on call %d", err, len(calls), failures+1)
			}
			for i, c := range ceilings {
				if gap := calls[i+1].Sub(calls[i]); gap < c-c/2 || gap > c {
					t.Errorf("wait %d = %v, want within [%v, %v]", i+1, gap, c-c/2, c)
				}
			}
			firstWaits[calls[1].Sub(calls[0])] = true
		})
	}
	if len(firstWaits) < 2 {
		t.Errorf("%d loops failing together all waited %v before retrying: no jitter", loops, firstWaits)
	}
}
