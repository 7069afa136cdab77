package reclaim

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
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
	want := []time.Duration{1, 2, 4, 8, 16, 30, 30, 30, 30, 30}
	for i, d := range delays {
		if d != want[i]*time.Second {
			t.Errorf("delay after failure %d = %v, want %v", i+1, d, want[i]*time.Second)
		}
	}
	h.ok()
	h.ok()
	if got := strings.Count(buf.String(), "recovered"); got != 1 {
		t.Errorf("logged %d recoveries, want 1", got)
	}
	if h.failed(errors.New("again")) != time.Second {
		t.Error("backoff did not reset after recovery")
	}
}
