package slack

import (
	"fmt"

	"github.com/slack-go/slack"
)

// StoreCorrupt says a value in one of the arbiter's KV buckets was not what its key holds (a
// server's reply stored through a reply subject, a hand edit), and what the arbiter did.
type StoreCorrupt struct {
	Bucket, Key string
	Revision    uint64
	Found       string // the start of the value, quoted
	Why         string
	Action      string
}

func (c StoreCorrupt) Text() string {
	return fmt.Sprintf("Corrupt value in %s %s: %s", c.Bucket, c.Key, c.Action)
}

func (c StoreCorrupt) Blocks() []slack.Block {
	return []slack.Block{
		header("Corrupt value in " + c.Bucket),
		fields("Key", escape(c.Key), "Revision", fmt.Sprint(c.Revision), "Why", escape(c.Why), "Done", escape(c.Action)),
		section("```" + escape(c.Found) + "```"),
		note("only an arbiter writes this bucket: find who else can (docs/security.md)"),
	}
}
