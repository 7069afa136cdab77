package soak

import (
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"time"

	bslack "github.com/bursar-dev/bursar/internal/slack"
	"github.com/bursar-dev/bursar/internal/slack/slacktest"
)

// The fake Slack's credentials and channel, as the arbiters are configured with them.
const (
	slackToken    = "xoxb-soak-token"
	slackSecret   = "soak-signing-secret-8f742231b10e"
	slackChannel  = "C0SOAKFINOP"
	slackApprover = "U0SOAKAPPR"
)

// slackDelay is how long a slow Slack takes to answer: 10 s, and a little more, so that the
// arbiters' own 10 s deadline on a call to Slack fires first every time (at exactly 10 s it is a
// race: one run's ask got through, the next one's did not).
const slackDelay = 10*time.Second + 500*time.Millisecond

// fakeSlack is Slack as the soak's arbiters see it: slacktest's Server on loopback (Slack's Web
// API in its wire format, slow or refusing during the outage), and the approver who reads it. It
// keeps every approval question the arbiters asked (by the hold id its buttons carry) and how
// each was decided (chat.update of its message), and its approver clicks the buttons (clicks.go).
type fakeSlack struct {
	srv  *slacktest.Server
	url  string // the Web API base, for slack.OptionAPIURL
	now  func() time.Time
	seed uint64

	clicking sync.WaitGroup // clicks whose answers are still to come

	mu     sync.Mutex
	clicks int             // clicks sent, which number their action_ts
	asks   map[string]*ask // by hold id
	byTS   map[string]*ask // by message ts
	posts  int             // messages posted (approvals and alerts)
	order  []string        // hold ids, in the order first asked
	seen   map[string]int  // how often each plan (planOf) was asked, under any hold id
}

// ask is one approval question as Slack saw it: its messages, the decision its approver will
// make, and what came of it.
type ask struct {
	hold     string
	restored bool   // asked after a restore: Keep or Go back
	plan     string // what it asks to do (planOf)
	nth      int    // the how-manieth ask of that plan
	channel  string
	ts       string    // the newest message asking it
	messages int       // messages posted for it (a retried post after a slow answer adds one)
	first    time.Time // market time of the first message
	deadline time.Time // "Decide by", as the message shows it
	choice   choice
	due      time.Time // market time the approver clicks
	clicks   int       // clicks sent
	clickAt  time.Time // market time of the first click
	again    time.Time // market time the approver may click again
	outcome  string    // "approved by U…", "rejected by U…", "rejected by timeout"; empty: undecided
}

func newFakeSlack(now func() time.Time, seed uint64) *fakeSlack {
	f := &fakeSlack{srv: slacktest.Start(slackToken), now: now, seed: seed, asks: map[string]*ask{},
		byTS: map[string]*ask{}, seen: map[string]int{}}
	f.url = f.srv.URL
	f.srv.Observe(f.read)
	return f
}

func (f *fakeSlack) close() {
	f.srv.Close()
	f.clicking.Wait()
}

// refused counts the calls Slack refused while down.
func (f *fakeSlack) refused() int { return f.srv.Refused() }

// read is the approver reading what the arbiters sent: each question posted, and each decision
// shown on one (kept as it arrives, even while Slack refuses to show it: the arbiter decided all
// the same).
func (f *fakeSlack) read(m slacktest.Message, refused bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case m.Method == "chat.postMessage" && !refused:
		f.posts++
		if q, ok := question(string(m.Blocks)); ok {
			f.asked(q, planOf(string(m.Blocks)), m.Channel, m.TS)
		}
	case m.Method == "chat.update":
		if a := f.byTS[m.TS]; a != nil && a.outcome == "" {
			a.outcome = outcomeOf(m.Text)
		}
	}
}

// asked records a message asking q, which holds plan; f.mu is held. The approver's mind is made
// up at the first message: by what the plan holds and how often the same plan was asked before,
// never by the hold's id or the hour it came (see decide). Asked after a restore, approving is
// Go back and rejecting Keep.
func (f *fakeSlack) asked(q asking, plan, ch, ts string) {
	a := f.asks[q.hold]
	if a == nil {
		f.seen[plan]++
		a = &ask{hold: q.hold, restored: q.restored, plan: plan, nth: f.seen[plan], first: f.now(), deadline: q.deadline}
		a.choice, a.due = decide(f.seed, plan, a.nth, q.deadline)
		f.asks[q.hold] = a
		f.order = append(f.order, q.hold)
	}
	a.channel, a.ts = ch, ts
	a.messages++
	f.byTS[ts] = a
}

// outcomeOf reads the decision from an approval message's new text ("Plan for svc approved by
// U0…", "Restore for svc kept by U0…").
func outcomeOf(text string) string {
	for _, s := range []string{"approved by ", "rejected by ", "kept by ", "gone back on by "} {
		if i := strings.Index(text, " "+s); i >= 0 {
			return text[i+1:]
		}
	}
	return "changed: " + text
}

// asking is what a message asks: about which hold, by when, and whether after a restore.
type asking struct {
	hold     string
	deadline time.Time
	restored bool
}

// question finds the hold an approval message asks about (its Approve button's value, or Go
// back's on a message after a restore) and its deadline ("Decide by"); ok is false for any other
// message (an alert).
func question(blocks string) (q asking, ok bool) {
	var v any
	if json.Unmarshal([]byte(blocks), &v) != nil {
		return q, false
	}
	walk(v, func(m map[string]any) {
		if id := m["action_id"]; id == bslack.ActionApprove || id == bslack.ActionGoBack {
			q.hold, _ = m["value"].(string)
			q.restored = id == bslack.ActionGoBack
		}
		if t, _ := m["text"].(string); strings.Contains(t, "Decide by") {
			q.deadline = dateIn(t)
		}
	})
	return q, q.hold != ""
}

// where is a plan line's target count and place ("→ 3 replicas (+1) on OFFER at LOCATION,"):
// the fleet's state when asked and the planner's pick among like offers, which a fault may
// change (a new leader breaks a tie otherwise), not what the plan does: its kind, delta and
// reason say that.
var where = regexp.MustCompile(`→ \d+ replicas \(([+-]\d+)\) on \S+ at \S+,`)

// planOf is what an approval message asks to do, as its approver weighs it: the lines of its
// Plan section (each action's kind, workload, delta and reason), without the replica counts and
// the offers. Empty when the message has no Plan section.
func planOf(blocks string) string {
	var v any
	if json.Unmarshal([]byte(blocks), &v) != nil {
		return ""
	}
	plan := ""
	walk(v, func(m map[string]any) {
		if t, _ := m["text"].(string); plan == "" && strings.HasPrefix(t, "*Plan*\n") {
			plan = where.ReplaceAllString(strings.TrimPrefix(t, "*Plan*\n"), "($1)")
		}
	})
	return plan
}

func walk(v any, visit func(map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		visit(x)
		for _, e := range x {
			walk(e, visit)
		}
	case []any:
		for _, e := range x {
			walk(e, visit)
		}
	}
}

// dateIn reads the first Slack date token (<!date^UNIX^…|RFC3339>) in text.
func dateIn(text string) time.Time {
	_, rest, ok := strings.Cut(text, "<!date^")
	if !ok {
		return time.Time{}
	}
	_, rest, _ = strings.Cut(rest, "|")
	s, _, _ := strings.Cut(rest, ">")
	t, _ := time.Parse(time.RFC3339, s)
	return t
}
