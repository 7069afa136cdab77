package bus

import (
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// HeaderRefusedBy names, on a DLQ copy, the part that refused to act on the message (an event
// its sender may not send, or one that cannot be true), as against one that could not decode or
// store it: the alerts are raised on these.
const HeaderRefusedBy = "Bursar-Refused-By"

// DLQSubjects is the subject filter of every message in DLQ.
const DLQSubjects = dlqPrefix + ">"

// Refused builds the DLQ copy of m that by refused to act on, with the reason (see DeadLetter).
// Its message id is by's and m's stream sequence, so the arbiters that all refuse m store one
// copy between them, and a durable consumer that dead-lettered m for a reason of its own keeps
// its own copy.
func Refused(m jetstream.Msg, stream, by, reason string) (*nats.Msg, []jetstream.PublishOpt) {
	dead, _ := DeadLetter(m, stream, reason)
	dead.Header.Set(HeaderRefusedBy, by)
	var opts []jetstream.PublishOpt
	if md, err := m.Metadata(); err == nil {
		opts = append(opts, jetstream.WithMsgID(fmt.Sprintf("refused:%s:%s:%d", by, md.Stream, md.Sequence.Stream)))
	}
	return dead, opts
}
