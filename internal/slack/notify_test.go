package slack

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/slack/slacktest"
)

// blockTexts renders an alert's blocks as Slack receives them and reads back every text.
func blockTexts(t *testing.T, a Alert) string {
	t.Helper()
	raw, err := json.Marshal(slack.Blocks{BlockSet: a.Blocks()})
	if err != nil {
		t.Fatal(err)
	}
	var back slack.Blocks
	if err := json.Unmarshal(raw, &back); err != nil || len(back.BlockSet) != len(a.Blocks()) {
		t.Fatalf("blocks do not read back (%v): %s", err, raw)
	}
	out, err := slacktest.Texts(raw)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, "\n")
}

func TestAlertBlocks(t *testing.T) {
	notice := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		alert    Alert
		wantText string
		want     []string
	}{
		{"reclaim handled in time", ReclaimHandled{Workload: "llm", Provider: "aws", Location: "aws-use1", Zone: "us-east-1a",
			Instance: "i-0abc", Kind: events.ReclaimInterruption, NoticeAt: notice, Deadline: notice.Add(2 * time.Minute),
			Replacement: "gcp-usc1/us-central1-a/a3-highgpu-8g/spot", ReadyAt: notice.Add(95 * time.Second)},
			"Reclaim handled: llm at aws-use1 replaced on gcp-usc1/us-central1-a/a3-highgpu-8g/spot in 1m35s",
			[]string{"aws / aws-use1 / us-east-1a", "i-0abc (interruption) at aws-use1", "1m35s, 25s before the deadline",
				"*Notice given*\n2m0s"}},
		{"reclaim handled late", ReclaimHandled{Workload: "llm", Location: "aws-use1", Instance: "i-0abc",
			Kind: events.ReclaimRebalance, NoticeAt: notice, Deadline: notice.Add(2 * time.Minute), Replacement: "x",
			ReadyAt: notice.Add(3 * time.Minute)}, "",
			[]string{"3m0s, 1m0s *after* the deadline", "*Where*\naws-use1"}},
		{"reclaim missed, nothing launched", ReclaimMissed{Workload: "llm, batch", Provider: "aws", Location: "aws-use1",
			Zone: "us-east-1a", Instance: "i-0abc", Kind: events.ReclaimInterruption, NoticeAt: notice,
			Deadline: notice.Add(30 * time.Second)},
			"Reclaim not handled in time: llm, batch at aws-use1 lost i-0abc with no replacement ready",
			[]string{"Reclaim not handled in time: llm, batch", "none launched", "*Notice given*\n30s", "held for approval"}},
		{"reclaim missed, launched", ReclaimMissed{Workload: "llm", Location: "aws-use1", Instance: "i-<1>",
			Replacement: "gcp-usc1/a3"}, "", []string{"gcp-usc1/a3 (launched, not ready)", "i-&lt;1&gt;"}},
		{"source back", SourceBack{Source: "GPU samples from aws-use1", LastSeen: notice, BackAt: notice.Add(12 * time.Minute)},
			"Source back: GPU samples from aws-use1 reports again after 12m0s",
			[]string{"Source back: GPU samples from aws-use1", "*Silent for*\n12m0s"}},
		{"action failed names the offer once", ActionFailed{&events.ActionUpdated{Workload: "llm", ActionID: "a1",
			Kind: "launch", Location: "gcp-usc1", Offer: "gcp-usc1/us-central1-a/a3-highgpu-8g/spot", Detail: "quota"}}, "",
			[]string{"*Where*\ngcp-usc1/us-central1-a/a3-highgpu-8g/spot\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.wantText != "" && tt.alert.Text() != tt.wantText {
				t.Errorf("text = %q, want %q", tt.alert.Text(), tt.wantText)
			}
			got := blockTexts(t, tt.alert) + "\n"
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("blocks lack %q:\n%s", w, got)
				}
			}
		})
	}
}
