package report

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/slack-go/slack"
)

// slackAPI is the part of slack-go's client the poster calls.
type slackAPI interface {
	PostMessageContext(ctx context.Context, channelID string, options ...slack.MsgOption) (string, string, error)
	UploadFileContext(ctx context.Context, params slack.UploadFileParameters) (*slack.FileSummary, error)
}

var _ slackAPI = (*slack.Client)(nil)

// SlackPoster posts reports to one Slack channel: the chart as a file with the report as its
// comment, or the report alone as a message.
type SlackPoster struct {
	api     slackAPI
	channel string
}

var _ Poster = (*SlackPoster)(nil)

// NewSlackPoster posts to channel (an ID like C0123) with a bot token that has chat:write and
// files:write. opts are slack-go options (tests point OptionAPIURL at a local server).
func NewSlackPoster(token, channel string, opts ...slack.Option) *SlackPoster {
	return &SlackPoster{api: slack.New(token, opts...), channel: channel}
}

// Post sends one report.
func (p *SlackPoster) Post(ctx context.Context, title, text string, chart []byte) error {
	text = slackText(text)
	if len(chart) == 0 {
		if _, _, err := p.api.PostMessageContext(ctx, p.channel, slack.MsgOptionText(text, false)); err != nil {
			return fmt.Errorf("posting %q to slack channel %s: %w", title, p.channel, err)
		}
		return nil
	}
	_, err := p.api.UploadFileContext(ctx, slack.UploadFileParameters{
		Reader: bytes.NewReader(chart), FileSize: len(chart), Filename: "chart.png", Title: title,
		InitialComment: text, Channel: p.channel, AltTxt: "chart: " + title,
	})
	if err != nil {
		return fmt.Errorf("uploading the chart of %q to slack channel %s: %w", title, p.channel, err)
	}
	return nil
}

// slackText turns a markdown report into Slack mrkdwn: the heading in bold, the table in a code
// block, which keeps its columns.
func slackText(md string) string {
	var head, table, rest []string
	for _, l := range strings.Split(strings.TrimSpace(md), "\n") {
		switch {
		case strings.HasPrefix(l, "## "):
			head = append(head, "*"+strings.TrimPrefix(l, "## ")+"*")
		case strings.HasPrefix(l, "|"):
			if !strings.HasPrefix(l, "| ---") {
				table = append(table, l)
			}
		case strings.HasPrefix(l, "> "):
			rest = append(rest, "_"+strings.TrimPrefix(l, "> ")+"_")
		}
	}
	out := strings.Join(head, "\n")
	if len(table) > 0 {
		out += "\n```\n" + strings.Join(table, "\n") + "\n```"
	}
	if len(rest) > 0 {
		out += "\n" + strings.Join(rest, "\n")
	}
	return out
}
