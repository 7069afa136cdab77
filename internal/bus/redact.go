package bus

import (
	"strings"

	"github.com/bursar-dev/bursar/internal/redact"
)

// Redact removes any password or token from a NATS URL, or from each URL of a comma-separated
// server list (nats.go accepts one), for logs and errors.
func Redact(raw string) string {
	parts := strings.Split(raw, ",")
	for i, p := range parts {
		parts[i] = redact.URL(strings.TrimSpace(p))
	}
	return strings.Join(parts, ",")
}
