package slack

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/slack-go/slack"

	"github.com/bursar-dev/bursar/internal/events"
)

// Button action ids on cost anomaly messages.
const (
	ActionExpected    = "bursar_anomaly_expected"
	ActionNotExpected = "bursar_anomaly_not_expected"
)

// AnomalyAnswer is a person's click on an anomaly message: whether its cause was expected.
type AnomalyAnswer struct {
	Anomaly, Series, Cause string
	Expected               bool
	Actor                  string // the Slack user id
	At                     time.Time
}

// anomalyRef is what an anomaly message's buttons carry, so that a click is understood after a
// restart with nothing kept in memory.
type anomalyRef struct {
	Anomaly string `json:"anomaly"`
	Series  string `json:"series"`
	Cause   string `json:"cause"`
}

// maxButtonValue is Slack's limit on a button's value.
const maxButtonValue = 2000

// Anomalies posts cost anomalies to a channel with Expected and Not expected buttons, and hands
// each click to OnAnswer, which stores it (the arbiter's anomaly watcher). Anyone who can see the
// channel may answer: an answer quiets repeats of the cause, it approves nothing.
type Anomalies struct {
	api     chatAPI
	channel string
	now     func() time.Time
	log     *slog.Logger
	// OnAnswer stores an answer; an error leaves the message as it is and tells the user.
	OnAnswer func(context.Context, AnomalyAnswer) error
}

// NewAnomalies returns anomaly messages posted to channel through api.
func NewAnomalies(api chatAPI, channel string, now func() time.Time, log *slog.Logger) *Anomalies {
	return &Anomalies{api: api, channel: channel, now: now, log: log}
}

// Post posts the anomaly e (its open) with the buttons, and returns where the message is.
func (a *Anomalies) Post(ctx context.Context, e *events.CostAnomaly) (Posted, error) {
	ref, err := json.Marshal(anomalyRef{Anomaly: e.Anomaly, Series: e.Series, Cause: e.Cause})
	if err != nil {
		return Posted{}, fmt.Errorf("encoding anomaly %s: %w", e.Anomaly, err)
	}
	msg := AnomalyOpened{e}
	var blocks []slack.Block
	switch {
	case len(e.Moved) == 0: // its cause is the whole scope: an answer would quiet all its anomalies
		blocks = append(msg.Blocks(), note("(No series explains this anomaly, so it cannot be answered from Slack.)"))
	case len(ref) > maxButtonValue: // a cause this long cannot ride on a button
		blocks = append(msg.Blocks(), note("(This anomaly's cause is too long to answer from Slack.)"))
	default:
		blocks = msg.withButtons(string(ref))
	}
	ch, ts, err := a.api.PostMessageContext(ctx, a.channel, slack.MsgOptionText(msg.Text(), false),
		slack.MsgOptionBlocks(blocks...))
	if err != nil {
		return Posted{}, fmt.Errorf("posting anomaly %s to slack channel %s: %w", e.Anomaly, a.channel, err)
	}
	return Posted{Channel: cmp.Or(ch, a.channel), TS: ts}, nil
}

// Handle takes a click on an anomaly message's buttons (ErrNotAButton for any other click),
// hands the answer to OnAnswer and shows on the message who answered what.
func (a *Anomalies) Handle(ctx context.Context, cb slack.InteractionCallback) error {
	act, ref, ok := anomalyButton(cb)
	if !ok {
		return ErrNotAButton
	}
	ans := AnomalyAnswer{Anomaly: ref.Anomaly, Series: ref.Series, Cause: ref.Cause,
		Expected: act.ActionID == ActionExpected, Actor: cb.User.ID, At: a.now().UTC()}
	if a.OnAnswer != nil {
		if err := a.OnAnswer(ctx, ans); err != nil {
			tellUser(ctx, a.api, a.log, cb, "Bursar could not store your answer; nothing changed. Try again in a minute.")
			return fmt.Errorf("anomaly %s: storing the answer: %w", ref.Anomaly, err)
		}
	}
	a.log.Info("anomaly answered", "anomaly", ref.Anomaly, "cause", ref.Cause, "expected", ans.Expected, "actor", ans.Actor)
	ch, ts := cmp.Or(cb.Container.ChannelID, cb.Channel.ID), cmp.Or(cb.Container.MessageTs, cb.Message.Timestamp)
	blocks := answeredBlocks(cb.Message.Blocks.BlockSet, cb.Message.Text, ans)
	if _, _, _, err := a.api.UpdateMessageContext(ctx, ch, ts, slack.MsgOptionText(cb.Message.Text, false),
		slack.MsgOptionBlocks(blocks...)); err != nil {
		a.log.Warn("updating the anomaly message", "anomaly", ref.Anomaly, "err", err)
	}
	return nil
}

// anomalyButton finds an anomaly button and what it carries in a block_actions callback.
func anomalyButton(cb slack.InteractionCallback) (*slack.BlockAction, anomalyRef, bool) {
	var ref anomalyRef
	if cb.Type != slack.InteractionTypeBlockActions {
		return nil, ref, false
	}
	for _, act := range cb.ActionCallback.BlockActions {
		if act.ActionID != ActionExpected && act.ActionID != ActionNotExpected {
			continue
		}
		if json.Unmarshal([]byte(act.Value), &ref) == nil && ref.Cause != "" {
			return act, ref, true
		}
	}
	return nil, ref, false
}

// tellUser answers the clicking user privately; failing to do so changes nothing else.
func tellUser(ctx context.Context, api chatAPI, log *slog.Logger, cb slack.InteractionCallback, text string) {
	ch := cmp.Or(cb.Channel.ID, cb.Container.ChannelID)
	if _, err := api.PostEphemeralContext(ctx, ch, cb.User.ID, slack.MsgOptionText(text, false)); err != nil {
		log.Warn("telling a slack user why their click did nothing", "user", cb.User.ID, "err", err)
	}
}
