package main

import (
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/alert"
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
