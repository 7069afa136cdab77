package slack

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/slack-go/slack"
)

// reportAPI is the part of slack-go's client a report post calls.
type reportAPI interface {
	PostMessageContext(ctx context.Context, channelID string, options ...slack.MsgOption) (string, string, error)
	UploadFileContext(ctx context.Context, params slack.UploadFileParameters) (*slack.FileSummary, error)
}

var _ reportAPI = (*slack.Client)(nil)

// ReportPoster posts scheduled reports (`report serve`) to the configured channel: a report with
// a chart as the uploaded PNG with the report as its comment, one without as a message. It is
// the report package's Poster, built on the same client as the alerts and approvals.
type ReportPoster struct {
	api     reportAPI
	channel string
}

// NewReportPoster returns a poster for c's channel and bot token, which needs chat:write and
// files:write. Reports only post, so no signing secret or app token is needed.
func NewReportPoster(c Config) (*ReportPoster, error) {
	switch {
	case c.BotToken == "":
		return nil, fmt.Errorf("slack: no bot token to post reports: set BURSAR_SLACK_BOT_TOKEN_FILE (or BURSAR_SLACK_BOT_TOKEN)")
	case c.Channel == "":
		return nil, fmt.Errorf("slack: no channel to post reports to: set BURSAR_SLACK_CHANNEL to a channel id such as C0123456789")
	}
	api, _ := Config{BotToken: c.BotToken, APIURL: c.APIURL}.Client()
	return &ReportPoster{api: api, channel: c.Channel}, nil
}

// Post sends one report: title, its markdown text, and the chart PNG when there is one.
func (p *ReportPoster) Post(ctx context.Context, title, markdown string, chart []byte) error {
	text := ReportText(markdown)
	if len(chart) == 0 {
		if _, _, err := p.api.PostMessageContext(ctx, p.channel, slack.MsgOptionText(text, false)); err != nil {
			return fmt.Errorf("posting report %q to slack channel %s: %w", title, p.channel, err)
		}
		return nil
	}
	_, err := p.api.UploadFileContext(ctx, slack.UploadFileParameters{
		Reader: bytes.NewReader(chart), FileSize: len(chart), Filename: "chart.png", Title: title,
		InitialComment: text, Channel: p.channel, AltTxt: "chart: " + title,
	})
	if err != nil {
		return fmt.Errorf("uploading the chart of report %q to slack channel %s: %w", title, p.channel, err)
	}
	return nil
}

// ReportText turns a markdown report into Slack mrkdwn: headings in bold, the table in a code
// block (which keeps its columns), notes in italics. Slack renders no markdown tables.
func ReportText(md string) string {
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
