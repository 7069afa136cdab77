package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/report"
)

var fcNow = time.Date(2026, 11, 30, 12, 30, 0, 0, time.UTC)

func TestForecastWindow(t *testing.T) {
	tests := []struct {
		name, history, at string
		wantSince         time.Time
		wantUntil         time.Time
		wantErr           string // part of the error; "" for none
	}{
		{"defaults", "12w", "", time.Date(2026, 9, 7, 12, 0, 0, 0, time.UTC), fcNow, ""},
		{"days, as of a date", "30d", "2026-11-20", time.Date(2026, 10, 21, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC), ""},
		{"hours", "100h", "2026-11-30T10:15:00Z", time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC), time.Date(2026, 11, 30, 10, 15, 0, 0, time.UTC), ""},
		{"not a period", "twelve weeks", "", time.Time{}, time.Time{}, `--history: "twelve weeks" is not a period`},
		{"negative", "-3d", "", time.Time{}, time.Time{}, "--history"},
		{"zero", "0w", "", time.Time{}, time.Time{}, "--history"},
		{"under an hour", "30m", "", time.Time{}, time.Time{}, "want from 1h to"},
		{"over a year", "60w", "", time.Time{}, time.Time{}, "want from 1h to"},
		{"empty history", "", "", time.Time{}, time.Time{}, "--history"},
		{"at not a time", "12w", "yesterday", time.Time{}, time.Time{}, `--at: "yesterday" is not a time`},
		{"at in the future", "12w", "2026-12-01", time.Time{}, time.Time{}, "later than now"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := forecastWindow(tt.history, tt.at, fcNow)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("err = %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !w.Since.Equal(tt.wantSince) || !w.Until.Equal(tt.wantUntil) {
				t.Errorf("window %s to %s (%v), want %s to %s", w.Since, w.Until, err, tt.wantSince, tt.wantUntil)
			}
		})
	}
}

// TestForecastFlagsFailBeforeConnecting: a bad flag is reported as such, before any store or
// NATS is reached.
func TestForecastFlagsFailBeforeConnecting(t *testing.T) {
	for _, args := range [][]string{{"--history", "soon"}, {"--at", "2026-13-01"}, {"-o", "xml"}} {
		r := root()
		var out bytes.Buffer
		r.SetOut(&out)
		r.SetErr(&out)
		r.SetArgs(append([]string{"forecast", "--nats", "nats://127.0.0.1:1"}, args...))
		err := r.Execute()
		if err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("report forecast %v: err = %v, want one naming %s", args, err, args[0])
		}
	}
}

func FuzzForecastWindow(f *testing.F) {
	for _, s := range [][2]string{{"12w", ""}, {"30d", "2026-11-20"}, {"100h", "2026-11-30T10:15:00Z"}, {"-1d", "x"}, {"9999999w", ""}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, history, at string) {
		w, err := forecastWindow(history, at, fcNow)
		if err != nil {
			return
		}
		if !w.Since.Before(w.Until) || w.Until.After(fcNow) || w.Until.Sub(w.Since) > report.MaxForecastHistory+time.Hour {
			t.Errorf("forecastWindow(%q, %q) = %s to %s", history, at, w.Since, w.Until)
		}
	})
}
