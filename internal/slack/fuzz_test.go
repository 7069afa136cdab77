package slack

import (
	"net/url"
	"os"
	"testing"
)

// FuzzParseInteraction feeds the interaction parser arbitrary bodies: it must never panic, and
// what it accepts must carry a type.
func FuzzParseInteraction(f *testing.F) {
	raw, err := os.ReadFile("testdata/block_actions.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte("payload=" + url.QueryEscape(string(raw))))
	f.Add([]byte("payload=%7B%22type%22%3A%22block_actions%22%2C%22actions%22%3A%5B%5D%7D"))
	f.Add([]byte("payload=%7B%22type%22%3A%22block_actions%22%2C%22state%22%3A%7B%22values%22%3A1%7D%7D"))
	f.Add([]byte("payload="))
	f.Add([]byte("%zz"))
	f.Fuzz(func(t *testing.T, body []byte) {
		cb, err := ParseInteraction(body)
		if err != nil {
			return
		}
		if cb.Type == "" {
			t.Fatal("accepted a payload with no type")
		}
		button(cb) // must not panic on whatever actions it holds
	})
}

func TestParseInteraction(t *testing.T) {
	raw, err := os.ReadFile("testdata/block_actions.json")
	if err != nil {
		t.Fatal(err)
	}
	cb, err := ParseInteraction([]byte("payload=" + url.QueryEscape(string(raw))))
	if err != nil {
		t.Fatal(err)
	}
	act, ok := button(cb)
	if !ok || cb.User.ID != "U0APPROVER" || act.ActionID != ActionApprove || act.Value != "PLAN_ID" || cb.Channel.ID != "C0FINOPS01" {
		t.Errorf("parsed %+v, button %+v", cb, act)
	}
	for _, bad := range []string{"", "payload=", "payload=%7B%7D", "payload=not-json", "%zz"} {
		if _, err := ParseInteraction([]byte(bad)); err == nil {
			t.Errorf("ParseInteraction(%q) accepted it", bad)
		}
	}
}
