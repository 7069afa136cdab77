package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/slack-go/slack"
)

// ErrNoLeader says no leading arbiter took a click in time: nothing was decided. The endpoint
// answers Slack 503, so the click is not taken for handled (the user may click again).
var ErrNoLeader = errors.New("no leading arbiter took the click")

// Forwarder hands the clicks an arbiter's HTTP endpoint verified to the leading arbiter, which
// alone holds the pending approvals: the leader handles them itself (Local), a standby asks the
// leader (Leader, over NATS in internal/system). Without it, a Service that picks either pod
// sends half the clicks to the standby, which finds nothing pending.
type Forwarder struct {
	Local   ButtonHandler
	Leading func() bool
	// Leader hands a click to the leader and returns its outcome; an error wrapping ErrNoLeader
	// when no leader answered.
	Leader func(ctx context.Context, cb slack.InteractionCallback) error
}

var _ ButtonHandler = (*Forwarder)(nil)

// Handle takes cb here when this arbiter leads, else asks the leader to.
func (f *Forwarder) Handle(ctx context.Context, cb slack.InteractionCallback) error {
	if f.Leading() {
		return f.Local.Handle(ctx, cb)
	}
	return f.Leader(ctx, cb)
}

// EncodeClick is what a standby sends the leader: the verified callback only, never the
// request's signature or body.
func EncodeClick(cb slack.InteractionCallback) ([]byte, error) {
	b, err := json.Marshal(&cb)
	if err != nil {
		return nil, fmt.Errorf("encoding a slack click: %w", err)
	}
	return b, nil
}

// DecodeClick reads what EncodeClick wrote.
func DecodeClick(data []byte) (slack.InteractionCallback, error) {
	var cb slack.InteractionCallback
	if err := json.Unmarshal(data, &cb); err != nil {
		return cb, fmt.Errorf("a forwarded slack click is not a callback's JSON: %w", err)
	}
	if cb.Type == "" {
		return cb, errors.New("a forwarded slack click has no type")
	}
	return cb, nil
}
