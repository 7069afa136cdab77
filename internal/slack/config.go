package slack

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
)

// callTimeout bounds one HTTP call to Slack's Web API.
const callTimeout = 15 * time.Second

// Config is how Bursar reaches Slack. Secrets come from the environment or from files, never
// from flags, and are never logged.
type Config struct {
	Channel       string // where alerts and approvals go (BURSAR_SLACK_CHANNEL)
	BotToken      string // xoxb-…: chat.postMessage, chat.update (BURSAR_SLACK_BOT_TOKEN[_FILE])
	SigningSecret string // verifies interaction requests (BURSAR_SLACK_SIGNING_SECRET[_FILE])
	AppToken      string // xapp-…: Socket Mode, where no public endpoint exists (BURSAR_SLACK_APP_TOKEN[_FILE])
	APIURL        string // a stand-in for https://slack.com/api/ (BURSAR_SLACK_API_URL): tests' fake Slack
}

// ConfigFromEnv reads the configuration with lookup (os.LookupEnv in production). Each secret may
// be given as NAME or, better, as NAME_FILE naming a file that holds it (a mounted secret).
func ConfigFromEnv(lookup func(string) (string, bool)) (Config, error) {
	var c Config
	c.Channel, _ = lookup("BURSAR_SLACK_CHANNEL")
	c.APIURL, _ = lookup("BURSAR_SLACK_API_URL")
	for _, s := range []struct {
		name string
		dst  *string
	}{{"BURSAR_SLACK_BOT_TOKEN", &c.BotToken}, {"BURSAR_SLACK_SIGNING_SECRET", &c.SigningSecret},
		{"BURSAR_SLACK_APP_TOKEN", &c.AppToken}} {
		v, err := secret(lookup, s.name)
		if err != nil {
			return c, err
		}
		*s.dst = v
	}
	return c, nil
}

func secret(lookup func(string) (string, bool), name string) (string, error) {
	if path, ok := lookup(name + "_FILE"); ok && path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("reading %s_FILE: %w", name, err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	v, _ := lookup(name)
	return strings.TrimSpace(v), nil
}

// Enabled reports whether Slack is configured at all.
func (c Config) Enabled() bool { return c.BotToken != "" && c.Channel != "" }

// Check says what is missing for the chosen way of receiving answers: an endpoint needs the
// signing secret, Socket Mode the app token.
func (c Config) Check(socketMode bool) error {
	switch {
	case c.BotToken == "":
		return fmt.Errorf("slack: no bot token: set BURSAR_SLACK_BOT_TOKEN_FILE (or BURSAR_SLACK_BOT_TOKEN)")
	case c.Channel == "":
		return fmt.Errorf("slack: no channel: set BURSAR_SLACK_CHANNEL to a channel id such as C0123456789")
	case socketMode && !strings.HasPrefix(c.AppToken, "xapp-"):
		return fmt.Errorf("slack: socket mode needs an app-level token (xapp-…): set BURSAR_SLACK_APP_TOKEN_FILE")
	case !socketMode && c.SigningSecret == "":
		return fmt.Errorf("slack: no signing secret to verify interactions: set BURSAR_SLACK_SIGNING_SECRET_FILE")
	}
	return nil
}

// Client returns the Web API client (and, with an app token, the Socket Mode client).
func (c Config) Client() (*slack.Client, *socketmode.Client) {
	// Every call to Slack has a deadline: a Slack that stops answering costs the call, not
	// the loop that made it.
	opts := []slack.Option{slack.OptionHTTPClient(&http.Client{Timeout: callTimeout})}
	if c.APIURL != "" {
		opts = append(opts, slack.OptionAPIURL(c.APIURL))
	}
	if c.AppToken != "" {
		opts = append(opts, slack.OptionAppLevelToken(c.AppToken))
	}
	api := slack.New(c.BotToken, opts...)
	if c.AppToken == "" {
		return api, nil
	}
	return api, socketmode.New(api)
}
