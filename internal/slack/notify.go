// Package slack is Bursar's voice in Slack: Block Kit alerts to a channel (reclaims handled,
// budget thresholds, failed actions, stale sources) and approval requests with Approve and Reject
// buttons, whose answers arrive at a signed HTTP endpoint or through Socket Mode and are published
// as action.updated events, the audit log.
package slack

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/bursar-dev/bursar/internal/events"
)

// chatAPI is the part of slack-go's client this package calls.
type chatAPI interface {
	PostMessageContext(ctx context.Context, channelID string, options ...slack.MsgOption) (string, string, error)
	UpdateMessageContext(ctx context.Context, channelID, timestamp string, options ...slack.MsgOption) (string, string, string, error)
	PostEphemeralContext(ctx context.Context, channelID, userID string, options ...slack.MsgOption) (string, error)
	GetUserGroupMembersContext(ctx context.Context, group string, options ...slack.GetUserGroupMembersOption) ([]string, error)
}

// userLookup is the part of slack-go's client that resolves a console identity given as an
// e-mail (users.lookupByEmail). It is apart from chatAPI so that a stand-in without a Slack
// (no e-mail can be resolved there) needs nothing more.
type userLookup interface {
	GetUserByEmailContext(ctx context.Context, email string) (*slack.User, error)
}

var _ userLookup = (*slack.Client)(nil)

var _ chatAPI = (*slack.Client)(nil)

// Alert is something worth telling the channel: a text for notifications and Block Kit blocks.
type Alert interface {
	Text() string
	Blocks() []slack.Block
}

// Notifier posts alerts to one channel.
type Notifier struct {
	api     chatAPI
	channel string
	log     *slog.Logger
}

// NewNotifier returns a notifier posting to channel through api.
func NewNotifier(api chatAPI, channel string, log *slog.Logger) *Notifier {
	return &Notifier{api: api, channel: channel, log: log}
}

// Post sends the alert and returns the message timestamp.
func (n *Notifier) Post(ctx context.Context, a Alert) (string, error) {
	_, ts, err := n.api.PostMessageContext(ctx, n.channel, slack.MsgOptionText(a.Text(), false),
		slack.MsgOptionBlocks(a.Blocks()...))
	if err != nil {
		return "", fmt.Errorf("posting %q to slack channel %s: %w", a.Text(), n.channel, err)
	}
	n.log.Debug("slack alert posted", "channel", n.channel, "ts", ts, "text", a.Text())
	return ts, nil
}

func mrkdwn(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, s, false, false)
}

func plain(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, s, true, false)
}

func header(s string) slack.Block { return slack.NewHeaderBlock(plain(s)) }

func section(s string) slack.Block { return slack.NewSectionBlock(mrkdwn(s), nil, nil) }

func fields(pairs ...string) slack.Block {
	var fs []*slack.TextBlockObject
	for i := 0; i+1 < len(pairs); i += 2 {
		fs = append(fs, mrkdwn("*"+pairs[i]+"*\n"+pairs[i+1]))
	}
	return slack.NewSectionBlock(nil, fs, nil)
}

func note(s string) slack.Block { return slack.NewContextBlock("", mrkdwn(s)) }

// when formats t so each reader sees it in their own time zone, with UTC as the fallback text.
func when(t time.Time) string {
	return fmt.Sprintf("<!date^%d^{date_short_pretty} {time_secs}|%s>", t.Unix(), t.UTC().Format(time.RFC3339))
}

// escape keeps outside text from turning into mentions or links in mrkdwn.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// ReclaimHandled says a reclaimed replica was replaced: where, by what, and how long it took.
type ReclaimHandled struct {
	Workload    string
	Provider    string
	Location    string
	Zone        string
	Instance    string
	Kind        events.ReclaimKind
	NoticeAt    time.Time
	Deadline    time.Time
	Replacement string // location/offer of the new replica
	ReadyAt     time.Time
}

func (r ReclaimHandled) Text() string {
	return fmt.Sprintf("Reclaim handled: %s at %s replaced on %s in %s", r.Workload, r.Location,
		r.Replacement, r.ReadyAt.Sub(r.NoticeAt).Round(time.Second))
}

func (r ReclaimHandled) Blocks() []slack.Block {
	took := r.ReadyAt.Sub(r.NoticeAt).Round(time.Second)
	margin := "before the deadline"
	if r.ReadyAt.After(r.Deadline) {
		margin = "*after* the deadline"
	}
	return []slack.Block{
		header("Reclaim handled: " + r.Workload),
		fields("Reclaimed", fmt.Sprintf("%s (%s) at %s", escape(r.Instance), r.Kind, escape(r.Location)),
			"Where", where(r.Provider, r.Location, r.Zone),
			"Replacement", escape(r.Replacement),
			"Time taken", fmt.Sprintf("%s, %s %s", took, r.Deadline.Sub(r.ReadyAt).Abs().Round(time.Second), margin),
			"Notice given", r.Deadline.Sub(r.NoticeAt).Round(time.Second).String(),
			"Notice", when(r.NoticeAt)),
	}
}

// ReclaimMissed says a reclaim's deadline passed with no replacement ready: capacity was lost.
type ReclaimMissed struct {
	Workload    string // the workload whose replacement was launched, or those that ran there
	Provider    string
	Location    string
	Zone        string
	Instance    string
	Kind        events.ReclaimKind
	NoticeAt    time.Time
	Deadline    time.Time
	Replacement string // location/offer of a replacement launched but not ready; empty if none
}

func (r ReclaimMissed) Text() string {
	return fmt.Sprintf("Reclaim not handled in time: %s at %s lost %s with no replacement ready", r.Workload,
		r.Location, r.Instance)
}

func (r ReclaimMissed) Blocks() []slack.Block {
	repl := "none launched"
	if r.Replacement != "" {
		repl = escape(r.Replacement) + " (launched, not ready)"
	}
	return []slack.Block{
		header("Reclaim not handled in time: " + r.Workload),
		fields("Reclaimed", fmt.Sprintf("%s (%s) at %s", escape(r.Instance), r.Kind, escape(r.Location)),
			"Where", where(r.Provider, r.Location, r.Zone),
			"Replacement", repl,
			"Notice given", r.Deadline.Sub(r.NoticeAt).Round(time.Second).String(),
			"Deadline", when(r.Deadline)),
		note("Check `arbiter status` and the action.updated events of the workload: a replacement may be held for " +
			"approval, blocked by a budget, or short of capacity"),
	}
}

// where names a place as provider, location and zone, leaving out what is unknown.
func where(provider, location, zone string) string {
	var parts []string
	for _, p := range []string{provider, location, zone} {
		if p != "" {
			parts = append(parts, escape(p))
		}
	}
	return strings.Join(parts, " / ")
}

// BudgetCrossed is a budget.alert event as a Slack alert.
type BudgetCrossed struct{ *events.BudgetAlert }

func (b BudgetCrossed) Text() string {
	verb := "crossed"
	if b.Cleared {
		verb = "back under"
	}
	return fmt.Sprintf("Budget %s: %s spend %s %s (%.2f of %.2f %s)", b.Policy, b.Basis, verb, b.Threshold,
		b.Spend, b.Limit, b.Currency)
}

func (b BudgetCrossed) Blocks() []slack.Block {
	title := fmt.Sprintf("Budget %s: %s %s reached", b.Policy, b.Basis, b.Threshold)
	if b.Cleared {
		title = fmt.Sprintf("Budget %s: back under %s %s", b.Policy, b.Basis, b.Threshold)
	}
	pct := 0.0
	if b.Limit > 0 {
		pct = 100 * b.Spend / b.Limit
	}
	return []slack.Block{
		header(title),
		fields("Spend", fmt.Sprintf("%.2f %s (%.0f%% of %.2f)", b.Spend, b.Currency, pct, b.Limit),
			"Scope", escape(b.Scope),
			"Period", fmt.Sprintf("%s from %s", b.Period, b.PeriodStart.Format("2006-01-02")),
			"Basis", b.Basis),
		note("`arbiter budget get " + b.Policy + "` shows the policy and what each threshold does"),
	}
}

// ActionFailed is an action.updated event with status failed.
type ActionFailed struct{ *events.ActionUpdated }

func (a ActionFailed) Text() string {
	return fmt.Sprintf("Action failed: %s %s at %s: %s", a.Kind, a.Workload, a.Location, a.Detail)
}

func (a ActionFailed) Blocks() []slack.Block {
	return []slack.Block{
		header("Action failed: " + a.Kind + " " + a.Workload),
		fields("Where", escape(offerAt(a.Location, a.Offer)), "Replicas", fmt.Sprint(a.Replicas),
			"Why it ran", escape(a.Reason), "When", when(a.At)),
		section("```" + escape(a.Detail) + "```"),
		note("action " + a.ActionID + ", plan " + a.PlanID),
	}
}

// offerAt names an offer with its location; the arbiter's offer ids (location/zone/instance
// type/market) already start with it.
func offerAt(location, offer string) string {
	if offer == "" || strings.HasPrefix(offer, location+"/") {
		return cmp.Or(offer, location)
	}
	return location + " " + offer
}

// SourceStale says a price or telemetry source has not reported for a while.
type SourceStale struct {
	Source   string
	LastSeen time.Time
	Now      time.Time
	Detail   string
}

func (s SourceStale) Text() string {
	return fmt.Sprintf("Source stale: %s silent for %s", s.Source, s.Now.Sub(s.LastSeen).Round(time.Minute))
}

func (s SourceStale) Blocks() []slack.Block {
	last := "never"
	if !s.LastSeen.IsZero() {
		last = when(s.LastSeen)
	}
	bs := []slack.Block{
		header("Source stale: " + s.Source),
		fields("Last report", last, "Silent for", s.Now.Sub(s.LastSeen).Round(time.Minute).String()),
	}
	if s.Detail != "" {
		bs = append(bs, section(escape(s.Detail)))
	}
	return append(bs, note("Plans keep using the last data seen; check the collector's logs and /metrics"))
}

// StreamFilling says a stream or bucket holds more than the alert's share of its byte limit: at
// the limit an event stream drops its oldest messages and a bucket refuses writes.
type StreamFilling struct {
	Stream          string
	Bytes, MaxBytes int64
}

func (s StreamFilling) Text() string {
	return fmt.Sprintf("Stream filling: %s holds %d%% of its %d MiB limit", s.Stream, s.percent(), s.MaxBytes>>20)
}

func (s StreamFilling) percent() int64 { return 100 * s.Bytes / max(s.MaxBytes, 1) }

func (s StreamFilling) Blocks() []slack.Block {
	return []slack.Block{
		header("Stream filling: " + s.Stream),
		fields("Holds", fmt.Sprintf("%d MiB (%d%%)", s.Bytes>>20, s.percent()), "Limit", fmt.Sprintf("%d MiB", s.MaxBytes>>20)),
		note("At the limit an event stream drops its oldest messages and a bucket refuses writes; " +
			"look for a publisher flooding it (a leaked key: rotate it) or raise the limit (docs/security.md)"),
	}
}

// SourceBack says a source that was stale reports again.
type SourceBack struct {
	Source   string
	LastSeen time.Time // its last report before the silence
	BackAt   time.Time
}

func (s SourceBack) Text() string {
	return fmt.Sprintf("Source back: %s reports again after %s", s.Source, s.BackAt.Sub(s.LastSeen).Round(time.Minute))
}

func (s SourceBack) Blocks() []slack.Block {
	last := "never"
	if !s.LastSeen.IsZero() {
		last = when(s.LastSeen)
	}
	return []slack.Block{
		header("Source back: " + s.Source),
		fields("Back at", when(s.BackAt), "Silent since", last,
			"Silent for", s.BackAt.Sub(s.LastSeen).Round(time.Minute).String()),
	}
}
