package bus_test

import (
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/bus"
)

// TestRedactServerList: every URL of a server list loses its credentials, not just the first.
func TestRedactServerList(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "two servers", in: "nats://alice:s3cret@a:4222,nats://bob:s3cret@b:4222",
			want: "nats://REDACTED@a:4222,nats://REDACTED@b:4222"},
		{name: "token in a query", in: "nats://a:4222?token=s3cret", want: "nats://a:4222?token=REDACTED"},
		{name: "spaces after commas", in: "nats://a:4222, nats://t:s3cret@b:4222", want: "nats://a:4222,nats://REDACTED@b:4222"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := bus.Redact(tt.in)
			if got != tt.want || strings.Contains(got, "s3cret") {
				t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
