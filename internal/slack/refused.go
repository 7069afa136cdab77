package slack

import (
	"fmt"
	"time"

	"github.com/slack-go/slack"
)

// EventRefused says a part refused to act on an event and sent it to DLQ: it came on a subject its
// type is not published on, or it claims what cannot be true (a job's progress beyond the time
// it has run). Either comes from a sender with valid credentials: a bug, or a leaked key.
type EventRefused struct {
	By      string // the part that refused it (arbiter)
	Subject string // where it was published
	Reason  string
	At      time.Time // when it reached DLQ
}

func (e EventRefused) Text() string {
	return fmt.Sprintf("Event refused by the %s: %s: %s", e.By, e.Subject, e.Reason)
}

func (e EventRefused) Blocks() []slack.Block {
	return []slack.Block{
		header("Event refused by the " + e.By),
		fields("Subject", escape(e.Subject), "When", when(e.At)),
		section("```" + escape(e.Reason) + "```"),
		note("Not acted on; kept in the DLQ stream. Check who holds the credentials that may publish " +
			escape(e.Subject) + " (docs/security.md)"),
	}
}
