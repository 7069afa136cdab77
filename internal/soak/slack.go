package soak

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bslack "github.com/bursar-dev/bursar/internal/slack"
)

// The fake Slack's credentials and channel, as the arbiters are configured with them.
const (
	slackToken    = "xoxb-soak-token"
	slackSecret   = "soak-signing-secret-8f742231b10e"
	slackChannel  = "C0SOAKFINOP"
	slackApprover = "U0SOAKAPPR"
)

// slackMode is how the fake Slack answers the Web API.
type slackMode int32

const (
	slackUp     slackMode = iota
	slackSlow             // every call is taken, and answered after slackDelay
	slackRefuse           // every call is refused: 429 ratelimited with Retry-After, or a 503
)

// slackDelay is how long a slow Slack takes to answer: 10 s, and a little more, so that the
// arbiters' own 10 s deadline on a call to Slack fires first every time (at exactly 10 s it is a
// race: one run's ask got through, the next one's did not).
const slackDelay = 10*time.Second + 500*time.Millisecond

// fakeSlack is Slack's Web API on loopback, in its wire format (form-encoded chat.* calls with
// the token, JSON answers as https://docs.slack.dev/reference/methods/chat.postMessage documents
// them, ok:false with an error code, 429 with Retry-After when rate limited). It keeps every
// approval question it was asked (by the hold id its buttons carry) and how each was decided
// (chat.update of its message), and its approver clicks the buttons (clicks.go).
type fakeSlack struct {
	srv  *httptest.Server
	url  string // the Web API base, for slack.OptionAPIURL
	now  func() time.Time
	seed uint64
	mode atomic.Int32
	stop chan struct{} // ends slow answers when the fake closes

	clicking sync.WaitGroup // clicks whose answers are still to come
	slowN    atomic.Int32   // calls taken while slow, not yet answered

	mu      sync.Mutex
	seq     int
	asks    map[string]*ask // by hold id
	byTS    map[string]*ask // by message ts
	posts   int             // messages posted (approvals and alerts)
	refused int             // calls refused while down
	order   []string        // hold ids, in the order first asked
	seen    map[string]int  // how often each plan (planOf) was asked, under any hold id
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
	f := &fakeSlack{now: now, seed: seed, stop: make(chan struct{}), asks: map[string]*ask{}, byTS: map[string]*ask{},
		seen: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/chat.postMessage", f.post)
	mux.HandleFunc("POST /api/chat.update", f.update)
	mux.HandleFunc("POST /api/chat.postEphemeral", f.ephemeral)
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { answer(w, slackErr("unknown_method")) })
	f.srv = httptest.NewServer(mux)
	f.url = f.srv.URL + "/api/"
	return f
}

func (f *fakeSlack) close() {
	close(f.stop)
	f.clicking.Wait()
	f.srv.Close()
}

func (f *fakeSlack) setMode(m slackMode) { f.mode.Store(int32(m)) }

// heal answers Slack again, once the calls it took while slow have had their late answers:
// the outage ends with its last slow answer.
func (f *fakeSlack) heal() {
	for end := time.Now().Add(2 * slackDelay); f.slowN.Load() > 0 && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	f.setMode(slackUp)
}

type reply map[string]any

func slackErr(code string) reply { return reply{"ok": false, "error": code} }

func answer(w http.ResponseWriter, r reply) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(r)
}

// admit authenticates a call and applies the mode: it reports whether the call is taken, having
// answered it already when not. A slow call is taken now and answered late (late).
func (f *fakeSlack) admit(w http.ResponseWriter, r *http.Request) bool {
	return f.authentic(w, r) && f.taken(w)
}

// authentic reads the call's form and checks its token.
func (f *fakeSlack) authentic(w http.ResponseWriter, r *http.Request) bool {
	if err := r.ParseForm(); err != nil {
		answer(w, slackErr("invalid_form_data"))
		return false
	}
	tok := r.PostForm.Get("token")
	if tok == "" {
		tok = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	if tok != slackToken {
		answer(w, slackErr("invalid_auth"))
		return false
	}
	return true
}

// taken refuses the call while Slack is down, in turn with 429 ratelimited and a 503.
func (f *fakeSlack) taken(w http.ResponseWriter) bool {
	if slackMode(f.mode.Load()) != slackRefuse {
		return true
	}
	f.mu.Lock()
	f.refused++
	n := f.refused
	f.mu.Unlock()
	if n%2 == 1 { // as Slack rate limits: HTTP 429, Retry-After in seconds
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		_ = json.NewEncoder(w).Encode(slackErr("ratelimited"))
		return false
	}
	http.Error(w, "upstream connect error", http.StatusServiceUnavailable)
	return false
}

// late holds a taken call's answer back while Slack is slow.
func (f *fakeSlack) late() {
	if slackMode(f.mode.Load()) != slackSlow {
		return
	}
	f.slowN.Add(1)
	defer f.slowN.Add(-1)
	select {
	case <-time.After(slackDelay):
	case <-f.stop:
	}
}

func (f *fakeSlack) post(w http.ResponseWriter, r *http.Request) {
	if !f.admit(w, r) {
		return
	}
	ch, text := r.PostForm.Get("channel"), r.PostForm.Get("text")
	if ch == "" || text == "" && r.PostForm.Get("blocks") == "" {
		answer(w, slackErr("no_text"))
		return
	}
	f.mu.Lock()
	f.seq++
	f.posts++
	ts := fmt.Sprintf("1764482400.%06d", f.seq)
	blocks := r.PostForm.Get("blocks")
	if q, ok := question(blocks); ok {
		f.asked(q, planOf(blocks), ch, ts)
	}
	f.mu.Unlock()
	f.late() // the message is in the channel; its answer comes late
	answer(w, reply{"ok": true, "channel": ch, "ts": ts, "message": reply{"type": "message", "subtype": "bot_message",
		"text": text, "ts": ts, "bot_id": "B0SOAKBOT"}})
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

// update takes chat.update of an approval message: the arbiter's decision, kept as it arrives,
// even while Slack refuses to show it (the arbiter decided all the same).
func (f *fakeSlack) update(w http.ResponseWriter, r *http.Request) {
	if !f.authentic(w, r) {
		return
	}
	ch, ts, text := r.PostForm.Get("channel"), r.PostForm.Get("ts"), r.PostForm.Get("text")
	f.mu.Lock()
	a := f.byTS[ts]
	if a != nil && a.outcome == "" {
		a.outcome = outcomeOf(text)
	}
	f.mu.Unlock()
	if !f.taken(w) {
		return
	}
	if a == nil {
		answer(w, slackErr("message_not_found"))
		return
	}
	f.late()
	answer(w, reply{"ok": true, "channel": ch, "ts": ts, "text": text})
}

func (f *fakeSlack) ephemeral(w http.ResponseWriter, r *http.Request) {
	if !f.admit(w, r) {
		return
	}
	f.late()
	answer(w, reply{"ok": true, "message_ts": fmt.Sprintf("1764482400.%06d", time.Now().UnixNano()%1e6)})
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
