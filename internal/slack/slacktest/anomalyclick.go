package slacktest

import (
	"encoding/json"
	"net/url"
)

// Click is the body Slack posts to the interactions endpoint when user clicks the button
// actionID (carrying value) on message m, as a block_actions payload in Slack's documented
// format, with the message's text and blocks as the fake server took them.
func Click(m Message, user, actionID, value string) []byte {
	blocks := m.Blocks
	if len(blocks) == 0 {
		blocks = json.RawMessage("[]")
	}
	p := map[string]any{
		"type":      "block_actions",
		"user":      map[string]any{"id": user, "username": user, "team_id": "T0BURSAR01"},
		"team":      map[string]any{"id": "T0BURSAR01", "domain": "bursar-dev"},
		"container": map[string]any{"type": "message", "message_ts": m.TS, "channel_id": m.Channel},
		"channel":   map[string]any{"id": m.Channel},
		"message":   map[string]any{"type": "message", "ts": m.TS, "text": m.Text, "blocks": blocks},
		"actions": []map[string]any{{"action_id": actionID, "block_id": "bursar_anomaly", "value": value,
			"type": "button", "action_ts": "1764482460.123456"}},
	}
	raw, _ := json.Marshal(p) // maps of strings and raw JSON always encode
	return []byte("payload=" + url.QueryEscape(string(raw)))
}
