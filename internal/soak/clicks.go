package soak

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/bursar-dev/bursar/internal/arbiter"
	bslack "github.com/bursar-dev/bursar/internal/slack"
)

// choice is what the soak's approver does about an approval question.
type choice int

const (
	approve choice = iota
	reject
	lateApprove // Approve, clicked after the deadline: it must not count
)

func (c choice) String() string { return [...]string{"approve", "reject", "approve late"}[c] }

// approvalTimeout is the soak policy's approval timeout (market time).
const approvalTimeout = time.Hour

// tickLength is the replay's tick of market time.
const tickLength = 30 * time.Second

// decide draws what the approver does about a question and when, from the seed, what its plan
// holds (planOf) and how many times that plan was asked so far (n, from 1): what the hold is,
// never when it came. The run without faults and the run with them must face the same person:
// the same plan asked for the nth time gets the same answer after the same delay from its ask
// (its deadline less the policy's timeout, the market time of the arbiter's pass, whatever
// Slack's delays), although a fault may shift it by a tick or two, across an hour, and give it
// other action ids. (Keyed by the hour of the ask, every question of an hour got one answer,
// and a hold that a fault pushed past the hour got the next hour's.)
func decide(seed uint64, plan string, n int, deadline time.Time) (choice, time.Time) {
	asked := deadline.Add(-approvalTimeout)
	h := fnv.New64a()
	_ = binary.Write(h, binary.LittleEndian, seed)
	_ = binary.Write(h, binary.LittleEndian, int64(n))
	h.Write([]byte(plan))
	rng := rand.New(rand.NewPCG(seed, h.Sum64()))
	ticks := int(approvalTimeout / tickLength)
	switch d := rng.IntN(100); {
	case d < 75:
		return approve, asked.Add(time.Duration(1+rng.IntN(ticks/3)) * tickLength)
	case d < 90:
		return reject, asked.Add(time.Duration(1+rng.IntN(ticks/3)) * tickLength)
	default:
		return lateApprove, deadline.Add(time.Duration(1+rng.IntN(10)) * tickLength)
	}
}

// maxClicks bounds how often the approver clicks one question that nothing came of (no arbiter
// had it pending, or it could not apply the decision). The approver clicks again every
// clickAgain while the books still hold the hold: past its deadline, a click times it out (the
// arbiter's own sweep runs on the wall clock, hours of a fast market apart).
const maxClicks = 1000

// clickTimeout is how long Slack waits for the interaction endpoint.
const clickTimeout = 3 * time.Second

// clickWait is how long a tick waits for its clicks' answers before the market moves on: an
// endpoint that answers at once (the arbiter decided) has decided within the tick; one held up by
// a slow Slack (telling the user privately why the click did nothing) answers later, as Slack
// lets the user go on.
const clickWait = 250 * time.Millisecond

// clickAgain is how long the approver waits before clicking again on a question nothing came of.
const clickAgain = 2 * time.Minute

// clickDue sends the clicks due at the market's time to endpoint, the leading arbiter's
// interaction URL (Slack's request URL routes to the leader), signed as Slack signs them, and
// waits for the answers as Slack does. A click that decided nothing is sent again on a later
// tick while held says the hold still waits, up to maxClicks.
func (f *fakeSlack) clickDue(ctx context.Context, endpoint string, held func(hold string) bool) {
	now := f.now()
	var due []click
	f.mu.Lock()
	for _, id := range f.order {
		a := f.asks[id]
		if a.outcome != "" || now.Before(a.due) || now.Before(a.again) || a.clicks >= maxClicks || a.clicks > 0 && !held(id) {
			continue
		}
		a.clicks++
		a.again = now.Add(clickAgain)
		if a.clickAt.IsZero() {
			a.clickAt = now
		}
		f.clicks++
		due = append(due, click{hold: id, channel: a.channel, ts: a.ts, approve: a.choice != reject, restored: a.restored, n: f.clicks})
	}
	f.mu.Unlock()
	f.send(ctx, endpoint, due)
}

// click is one button click on an approval message; n makes it unique, as Slack's trigger ids.
// On a message after a restore, approving is Go back and rejecting Keep.
type click struct {
	hold, channel, ts string
	approve, restored bool
	n                 int
}

// button is the clicked button's action id and label.
func (c click) button() (string, string) {
	switch {
	case c.restored && c.approve:
		return bslack.ActionGoBack, "Go back"
	case c.restored:
		return bslack.ActionKeep, "Keep"
	case c.approve:
		return bslack.ActionApprove, "Approve"
	}
	return bslack.ActionReject, "Reject"
}

// send sends the clicks at once and waits for their answers, up to clickWait; the fake's close
// waits for the rest.
func (f *fakeSlack) send(ctx context.Context, endpoint string, clicks []click) {
	var wg sync.WaitGroup
	for _, c := range clicks {
		wg.Go(func() { f.click(ctx, endpoint, c) })
	}
	done := make(chan struct{})
	f.clicking.Go(func() { wg.Wait(); close(done) })
	select {
	case <-done:
	case <-time.After(clickWait):
	}
}

// click posts one button click to the endpoint as Slack does: a form with the block_actions
// object is a JSON object of a click's payload.
type object = map[string]any

// payload, signed with the signing secret at the wall clock's time.
func (f *fakeSlack) click(ctx context.Context, endpoint string, c click) {
	hold, channel, ts, n := c.hold, c.channel, c.ts, c.n
	button, label := c.button()
	payload, _ := json.Marshal(object{
		"type": "block_actions", "api_app_id": "A0SOAKAPP", "trigger_id": fmt.Sprintf("%d.soak.%d", n, time.Now().UnixNano()),
		"user":      object{"id": slackApprover, "username": "soak", "name": "soak", "team_id": "T0SOAK"},
		"team":      object{"id": "T0SOAK", "domain": "soak"},
		"channel":   object{"id": channel, "name": "finops"},
		"container": object{"type": "message", "message_ts": ts, "channel_id": channel, "is_ephemeral": false},
		"message":   object{"type": "message", "ts": ts, "text": "Approval needed", "bot_id": "B0SOAKBOT"},
		"actions": []object{{"action_id": button, "block_id": "bursar_approval", "value": hold, "type": "button",
			"text": object{"type": "plain_text", "text": label}, "action_ts": fmt.Sprintf("1764482460.%06d", n%1e6)}},
	})
	body := []byte("payload=" + url.QueryEscape(string(payload)))
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), clickTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return
	}
	at := time.Now().Unix()
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(at, 10))
	req.Header.Set("X-Slack-Signature", bslack.Sign(slackSecret, at, body))
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
}

// rejectNow clicks Reject on every question of holds that Slack has (Keep, on one after a restore).
func (f *fakeSlack) rejectNow(ctx context.Context, endpoint string, holds map[string]bool) {
	var todo []click
	f.mu.Lock()
	for id := range holds {
		if a := f.asks[id]; a != nil && a.outcome == "" {
			f.clicks++
			a.clicks++
			todo = append(todo, click{hold: id, channel: a.channel, ts: a.ts, restored: a.restored, n: f.clicks})
		}
	}
	f.mu.Unlock()
	f.send(ctx, endpoint, todo)
}

// askedAll says whether Slack has a question for every hold in books.
func (f *fakeSlack) askedAll(books map[string]*arbiter.Book) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, b := range books {
		for _, h := range b.Holds {
			if f.asks[h.ID] == nil {
				return false
			}
		}
	}
	return true
}

// stillOpen are the holds Slack has no decision on: never asked, or not decided.
func (f *fakeSlack) stillOpen(holds map[string]bool) map[string]bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]bool{}
	for id := range holds {
		if a := f.asks[id]; a == nil || a.outcome == "" {
			out[id] = true
		}
	}
	return out
}

// snapshot copies what the fake saw, by hold id.
func (f *fakeSlack) snapshot() map[string]ask {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]ask, len(f.asks))
	for id, a := range f.asks {
		out[id] = *a
	}
	return out
}
