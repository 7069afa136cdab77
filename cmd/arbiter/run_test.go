package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/alert"
	"github.com/bursar-dev/bursar/internal/system"
)

func TestCheckStale(t *testing.T) {
	tests := []struct {
		name    string
		th      alert.Thresholds
		wantErr string
	}{
		{"defaults", alert.Thresholds{Prices: alert.DefaultPriceStale, Telemetry: alert.DefaultTelemetryStale}, ""},
		{"off", alert.Thresholds{}, ""},
		{"negative prices", alert.Thresholds{Prices: -time.Minute}, "--stale-prices -1m0s"},
		{"negative telemetry", alert.Thresholds{Telemetry: -time.Second}, "--stale-telemetry -1s"},
		{"fill over the limit", alert.Thresholds{Fill: 1.5}, "--stream-fill-alert 1.5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkStale(tt.th)
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("checkStale = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// A second "arbiter run" on a data dir another one runs on is refused before it opens anything
// there, whatever its flags, naming the holder; the first goes on, its store intact. Before, a
// second run with --no-history started a second JetStream on the same store and both led.
func TestSecondRunOnADataDirIsRefused(t *testing.T) {
	t.Chdir(t.TempDir()) // no ./bursar.yaml
	dir := filepath.Join(t.TempDir(), "data")
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- runRoot(ctx, nil, "--data-dir", dir, "--log-level", "error", "run", "--listen", addr, "--metrics-listen", "", "--console-listen", "", "--no-history")
	}()
	t.Cleanup(func() { cancel(); <-done })
	budget := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := runRoot(context.Background(), &out, append([]string{"--data-dir", dir, "--nats", "nats://" + addr,
			"--log-level", "error", "budget"}, args...)...)
		return out.String(), err
	}
	waitFor(t, "the first arbiter answers", func() bool {
		_, err := budget("set", "p", "--scope", "all", "--limit", "5", "--alert", "80%")
		return err == nil
	})

	for _, flags := range [][]string{{"--no-history"}, {}} {
		t.Run(strings.Join(append([]string{"run"}, flags...), " "), func(t *testing.T) {
			second := freeAddr(t)
			sctx, scancel := context.WithCancel(context.Background())
			defer scancel()
			sdone := make(chan error, 1)
			go func() {
				sdone <- runRoot(sctx, nil, append([]string{"--data-dir", dir, "--log-level", "error", "run", "--listen", second,
					"--metrics-listen", "", "--console-listen", ""}, flags...)...)
			}()
			var err error
			select {
			case err = <-sdone:
			case <-time.After(15 * time.Second):
				scancel()
				<-sdone
				t.Fatal("a second arbiter ran on the same data dir")
			}
			var held *system.DataDirHeldError
			if !errors.As(err, &held) || held.Holder.PID != os.Getpid() || !strings.Contains(err.Error(), dir) {
				t.Fatalf("second run: %v, want the data dir's holder (pid %d) and the dir named", err, os.Getpid())
			}
		})
	}
	if out, err := budget("get", "p"); err != nil || !strings.Contains(out, "p") {
		t.Fatalf("the first arbiter's store after the second was refused: %v\n%s", err, out)
	}
}
