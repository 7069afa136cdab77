package slack

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"testing"

	"github.com/slack-go/slack"

	"github.com/bursar-dev/bursar/internal/events"
)

// TestForwarderTakesClicksWhereTheLeaderIs: a leading arbiter decides a click itself; a standby
// hands the verified callback to the leader and answers Slack with the leader's outcome, or 503
// when no leader took it.
func TestForwarderTakesClicksWhereTheLeaderIs(t *testing.T) {
	tests := []struct {
		name         string
		leading      bool
		leaderErr    error
		wantCode     int
		wantLocal    bool // decided by this arbiter's approvals
		wantToLeader bool
	}{
		{"the leader decides itself", true, nil, http.StatusOK, true, false},
		{"a standby hands the click to the leader", false, nil, http.StatusOK, false, true},
		{"the leader refused: still taken", false, ErrNoPending, http.StatusOK, false, true},
		{"no leader answered: 503", false, fmt.Errorf("asking: %w", ErrNoLeader), http.StatusServiceUnavailable, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			ask(t, r, "plan-1", "U0APPROVER")
			var got []slack.InteractionCallback
			f := &Forwarder{Local: r.approvals, Leading: func() bool { return tt.leading },
				Leader: func(_ context.Context, cb slack.InteractionCallback) error {
					data, err := EncodeClick(cb)
					if err != nil {
						return err
					}
					back, err := DecodeClick(data)
					if err != nil {
						return err
					}
					got = append(got, back)
					return tt.leaderErr
				}}
			r.handler = NewInteractionHandler(NewVerifier(testSecret, r.clock.Now), f, slog.New(slog.DiscardHandler))
			if code := r.click("U0APPROVER", ActionApprove, "plan-1"); code != tt.wantCode {
				t.Errorf("status = %d, want %d", code, tt.wantCode)
			}
			if d := r.decided(); (len(d) == 1) != tt.wantLocal {
				t.Errorf("decided here: %+v, want %v", d, tt.wantLocal)
			}
			if (len(got) == 1) != tt.wantToLeader {
				t.Fatalf("handed to the leader: %d clicks, want %v", len(got), tt.wantToLeader)
			}
			if tt.wantToLeader {
				act, ok := button(got[0])
				if !ok || act.ActionID != ActionApprove || act.Value != "plan-1" || got[0].User.ID != "U0APPROVER" ||
					got[0].Container.MessageTs == "" {
					t.Errorf("the leader got %+v", got[0])
				}
			}
		})
	}
}

// TestForwardedClickDecidesLikeTheEndpoint: what a standby sends decodes into a callback the
// approvals decide as the one Slack posted.
func TestForwardedClickDecidesLikeTheEndpoint(t *testing.T) {
	r := newRig(t)
	ask(t, r, "plan-1", "U0APPROVER")
	form, err := url.ParseQuery(string(payload(t, "U0APPROVER", ActionApprove, "plan-1")))
	if err != nil {
		t.Fatal(err)
	}
	cb, err := ParseInteraction([]byte("payload=" + url.QueryEscape(form.Get("payload"))))
	if err != nil {
		t.Fatal(err)
	}
	data, err := EncodeClick(cb)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeClick(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.approvals.Handle(context.Background(), back); err != nil {
		t.Fatal(err)
	}
	if d := r.decided(); len(d) != 1 || d[0].Status != events.ActionApproved || d[0].Actor != "U0APPROVER" {
		t.Fatalf("decisions = %+v", d)
	}
}

func TestDecodeClickRefusesMalformed(t *testing.T) {
	for _, in := range []string{``, `null`, `{}`, `[]`, `{"type":`, `{"type":"block_actions","actions":5}`, `"x"`} {
		if _, err := DecodeClick([]byte(in)); err == nil {
			t.Errorf("DecodeClick(%q) took it", in)
		}
	}
}

func FuzzDecodeClick(f *testing.F) {
	f.Add([]byte(`{"type":"block_actions","user":{"id":"U1"},"actions":[{"action_id":"bursar_approve","value":"p"}]}`))
	f.Add([]byte(`{"type":"block_actions","state":{"values":{}}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cb, err := DecodeClick(data)
		if err != nil {
			return
		}
		again, err := EncodeClick(cb)
		if err != nil {
			t.Fatalf("a decoded click does not encode: %v", err)
		}
		if _, err := DecodeClick(again); err != nil {
			t.Fatalf("an encoded click does not decode: %v\n%s", err, again)
		}
	})
}
