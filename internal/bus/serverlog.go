package bus

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// serverLog hands the embedded server's own log to Bursar's: its warnings and errors (a store
// that is not writable, JetStream refusing writes on a full disk, a damaged message block it
// skipped) reach the operator. Its notices (listening, JetStream's limits) are debug lines.
type serverLog struct{ log *slog.Logger }

var _ server.Logger = serverLog{}

func (l serverLog) Noticef(format string, v ...any) { l.log.Debug(line(format, v)) }
func (l serverLog) Warnf(format string, v ...any)   { l.log.Warn(line(format, v)) }
func (l serverLog) Errorf(format string, v ...any)  { l.log.Error(line(format, v)) }
func (l serverLog) Fatalf(format string, v ...any)  { l.log.Error(line(format, v)) }
func (l serverLog) Debugf(format string, v ...any)  {}
func (l serverLog) Tracef(format string, v ...any)  {}

func line(format string, v []any) string {
	return "nats-server: " + strings.TrimSpace(fmt.Sprintf(format, v...))
}
