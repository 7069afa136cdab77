package collect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/robfig/cron/v3"

	"github.com/bursar-dev/bursar/internal/pricesource"
	"github.com/bursar-dev/bursar/internal/pricing"
)

// scriptedSource is a fake provider that fails with the scripted errors, in order, then
// returns an empty catalog; it records when it was called.
type scriptedSource struct {
	mu    sync.Mutex
	errs  []error
	calls []time.Time
}

func (s *scriptedSource) Name() string { return "scripted" }

func (s *scriptedSource) Fetch(ctx context.Context, _ time.Time) (pricing.Catalog, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, time.Now())
	if len(s.errs) == 0 {
		return pricing.Catalog{Offers: []pricing.Offer{}}, nil
	}
	err := s.errs[0]
	s.errs = s.errs[1:]
	return pricing.Catalog{}, err
}

func (s *scriptedSource) gaps() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []time.Duration
	for i := 1; i < len(s.calls); i++ {
		out = append(out, s.calls[i].Sub(s.calls[i-1]))
	}
	return out
}

func TestFetchRetries(t *testing.T) {
	rateLimited := &pricesource.Error{Kind: pricesource.KindRateLimited, RetryAfter: 7 * time.Second}
	server := &pricesource.Error{Kind: pricesource.KindServer}
	auth := &pricesource.Error{Kind: pricesource.KindAuth}
	tests := []struct {
		name      string
		errs      []error
		retries   int
		wantErr   bool
		wantGaps  []time.Duration
		wantCalls int
	}{
		{name: "429 waits for Retry-After", errs: []error{rateLimited}, retries: 3, wantGaps: []time.Duration{7 * time.Second}, wantCalls: 2},
		{name: "5xx backs off exponentially", errs: []error{server, server, server}, retries: 3,
			wantGaps: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, wantCalls: 4},
		{name: "backoff is capped", errs: []error{server, server, server, server}, retries: 5,
			wantGaps: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second}, wantCalls: 5},
		{name: "auth is not retried", errs: []error{auth}, retries: 3, wantErr: true, wantCalls: 1},
		{name: "retries run out", errs: []error{server, server, server}, retries: 1, wantErr: true,
			wantGaps: []time.Duration{time.Second}, wantCalls: 2},
		{name: "plain errors are not retried", errs: []error{errors.New("bug")}, retries: 3, wantErr: true, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := &scriptedSource{errs: tt.errs}
				c := New(nil, quiet(), nil)
				job := Job{Source: src, Retries: tt.retries, Backoff: time.Second, MaxBackoff: 5 * time.Second}
				_, err := c.fetch(context.Background(), job, t0)
				if (err != nil) != tt.wantErr {
					t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
				}
				if len(src.calls) != tt.wantCalls {
					t.Fatalf("calls = %d, want %d", len(src.calls), tt.wantCalls)
				}
				gaps := src.gaps()
				for i, want := range tt.wantGaps { // jittered: in the upper half of want
					if gaps[i] < want-want/2 || gaps[i] > want {
						t.Errorf("gap %d = %v, want within [%v, %v]", i, gaps[i], want-want/2, want)
					}
				}
			})
		})
	}
}

// TestFetchTimeout: an attempt that outlives its timeout is cancelled and retried.
func TestFetchTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		src := sourceFunc(func(ctx context.Context) (pricing.Catalog, error) {
			calls++
			if calls == 1 {
				<-ctx.Done()
				return pricing.Catalog{}, ctx.Err()
			}
			return pricing.Catalog{}, nil
		})
		c := New(nil, quiet(), nil)
		start := time.Now()
		_, err := c.fetch(context.Background(), Job{Source: src, Timeout: 30 * time.Second, Retries: 1, Backoff: time.Second}, t0)
		if took := time.Since(start); err != nil || calls != 2 || took < 30500*time.Millisecond || took > 31*time.Second {
			t.Fatalf("err %v, calls %d, took %v; want success on the second call after 30.5s to 31s", err, calls, took)
		}
	})
}

type sourceFunc func(ctx context.Context) (pricing.Catalog, error)

func (sourceFunc) Name() string { return "func" }
func (f sourceFunc) Fetch(ctx context.Context, _ time.Time) (pricing.Catalog, error) {
	return f(ctx)
}

// TestRunSchedules: a run at start, then one per scheduled time, each within its jitter.
func TestRunSchedules(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		src := &scriptedSource{}
		c := New(nil, quiet(), nil)
		ctx, cancel := context.WithTimeout(context.Background(), 35*time.Minute)
		defer cancel()
		job := Job{Source: src, Schedule: "@every 10m", Jitter: 30 * time.Second}
		if err := c.Run(ctx, []Job{job}, "@every 6h"); err != nil {
			t.Fatal(err)
		}
		if len(src.calls) != 4 {
			t.Fatalf("calls = %d, want 4 (start, then every 10 minutes for 35 minutes)", len(src.calls))
		}
		if src.calls[0] != start {
			t.Errorf("first run at +%v, want at start", src.calls[0].Sub(start))
		}
		// Each run is at its scheduled time plus up to 30 s of jitter. The scheduled time is the
		// cron schedule's next after the previous run, and cron's @every rounds that down to the
		// second, so a gap may fall short of 10m by less than a second.
		every, err := cron.ParseStandard(job.Schedule)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(src.calls); i++ {
			due := every.Next(src.calls[i-1])
			if at := src.calls[i]; at.Before(due) || !at.Before(due.Add(job.Jitter)) {
				t.Errorf("run %d at +%v, want within [%v, %v)", i, at.Sub(start), due.Sub(start), due.Add(job.Jitter).Sub(start))
			}
			if g := src.calls[i].Sub(src.calls[i-1]); g < 10*time.Minute-time.Second || g >= 10*time.Minute+30*time.Second {
				t.Errorf("gap %d = %v, want within [9m59s, 10m30s)", i, g)
			}
		}
	})
}

func TestRunRejectsBadSchedules(t *testing.T) {
	c := New(nil, quiet(), nil)
	job := Job{Source: &scriptedSource{}, Schedule: "every ten minutes"}
	if err := c.Run(context.Background(), []Job{job}, "@every 6h"); err == nil {
		t.Error("bad job schedule accepted")
	}
	job.Schedule = "@every 10m"
	if err := c.Run(context.Background(), []Job{job}, "sometimes"); err == nil {
		t.Error("bad snapshot schedule accepted")
	}
}

// TestShutdownIsNotAFailure: a fetch cut short because the collector is stopping is logged at
// debug and counts neither as a failed fetch nor toward staleness; an attempt that outlives its
// own timeout while the collector runs still does.
func TestShutdownIsNotAFailure(t *testing.T) {
	tests := []struct {
		name         string
		timeout      time.Duration
		shutdown     bool // the source sees the collector's context end mid-fetch
		wantErrors   float64
		wantStale    bool
		wantWarnings int
	}{
		{name: "shutdown mid-fetch", shutdown: true},
		{name: "attempt timeout", timeout: time.Second, wantErrors: 1, wantStale: true, wantWarnings: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				src := sourceFunc(func(fctx context.Context) (pricing.Catalog, error) {
					if tt.shutdown {
						cancel()
					}
					<-fctx.Done()
					return pricing.Catalog{}, fmt.Errorf("GET prices: %w", fctx.Err())
				})
				var logs bytes.Buffer
				log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
				c := New(nil, log, NewMetrics(prometheus.NewRegistry()))
				job := Job{Source: src, Timeout: tt.timeout, StaleAfter: 1}
				if _, err := c.RunOnce(ctx, job, t0, true); err == nil {
					t.Fatal("RunOnce() = nil for a fetch that never finished")
				}
				if got := sumOf(t, c.metrics.errors); got != tt.wantErrors {
					t.Errorf("errors metric = %v, want %v", got, tt.wantErrors)
				}
				if c.Stale(src.Name()) != tt.wantStale {
					t.Errorf("stale = %v, want %v", c.Stale(src.Name()), tt.wantStale)
				}
				warnings := strings.Count(logs.String(), "level=WARN") + strings.Count(logs.String(), "level=ERROR")
				if warnings != tt.wantWarnings {
					t.Errorf("%d warnings or errors logged, want %d:\n%s", warnings, tt.wantWarnings, logs.String())
				}
				if tt.shutdown && !strings.Contains(logs.String(), "level=DEBUG") {
					t.Errorf("the interrupted fetch was not logged at debug:\n%s", logs.String())
				}
			})
		})
	}
}

// sumOf adds up every series of a counter vector.
func sumOf(t *testing.T, c prometheus.Collector) float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 64)
	c.Collect(ch)
	close(ch)
	sum := 0.0
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			t.Fatal(err)
		}
		sum += pb.GetCounter().GetValue()
	}
	return sum
}
