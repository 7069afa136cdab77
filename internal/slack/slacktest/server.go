// Package slacktest is a local stand-in for Slack's Web API: it speaks the wire format slack-go
// sends (form-encoded chat.* calls with the token in the body) and answers as Slack documents
// (https://docs.slack.dev/reference/methods/chat.postMessage and friends), records every message,
// and can fail on purpose: one call, or every call for a while (slow or down, as the soak's
// Slack outage is). It is the one fake Slack: the tests' and the soak's.
package slacktest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Message is one call the server accepted.
type Message struct {
	Method  string // chat.postMessage, chat.update or chat.postEphemeral
	Channel string
	TS      string // the message's timestamp: new for a post, the edited one for an update
	User    string // ephemeral: who sees it
	Text    string
	Blocks  json.RawMessage
}

// Server is a fake Slack Web API.
type Server struct {
	URL   string // give it to slack.OptionAPIURL
	Token string

	mu       sync.Mutex
	messages []Message
	groups   map[string][]string
	users    map[string]string // e-mail -> user id
	failNext map[string]string // method -> Slack error code
	seq      int
	live     map[string]bool // channel/ts of posted messages
	changed  chan struct{}
	outage   // Slow and Refuse (outage.go)
	observe  func(m Message, refused bool)
	done     chan struct{} // closed by Close: answers held back end
	stop     func()

	wsURL    string
	AppToken string            // xapp-… accepted by apps.connections.open
	queued   []json.RawMessage // interactive payloads for the next Socket Mode connection
	acks     []string          // envelope ids the client acknowledged
	sockets  socketSet         // Socket Mode connections open now (sockets.go)
}

// New starts a server that accepts token; it stops when the test ends.
func New(tb testing.TB, token string) *Server {
	s := Start(token)
	tb.Cleanup(s.Close)
	return s
}

// Start starts a server that accepts token outside a test (the soak's Slack); Close stops it.
func Start(token string) *Server {
	s := &Server{Token: token, groups: map[string][]string{}, users: map[string]string{}, failNext: map[string]string{},
		live: map[string]bool{}, changed: make(chan struct{}, 1), done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/chat.postMessage", s.post)
	mux.HandleFunc("POST /api/chat.update", s.update)
	mux.HandleFunc("POST /api/chat.postEphemeral", s.ephemeral)
	mux.HandleFunc("POST /api/usergroups.users.list", s.groupMembers)
	mux.HandleFunc("POST /api/users.lookupByEmail", s.lookupByEmail)
	mux.HandleFunc("POST /api/apps.connections.open", s.connectionsOpen)
	mux.HandleFunc("GET /link", s.socket)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { reply(w, slackErr("unknown_method")) })
	ts := httptest.NewServer(mux)
	s.stop = sync.OnceFunc(func() {
		close(s.done)
		ts.Close()
	})
	s.URL = ts.URL + "/api/"
	s.wsURL = "ws" + strings.TrimPrefix(ts.URL, "http") + "/link"
	return s
}

// Close ends the answers held back (SlowNext, Slow) and stops the server.
func (s *Server) Close() { s.stop() }

// Observe has fn called with every chat.* call the server takes (refused false) and every one it
// refuses while down (refused true, see Refuse), before it is answered: the soak's approver reads
// the questions and decisions it is shown. Set it before the first call.
func (s *Server) Observe(fn func(m Message, refused bool)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.observe = fn
}

// SetGroup sets the members of a user group (S… id).
func (s *Server) SetGroup(id string, users ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.groups[id] = users
}

// FailNext makes the next call to method answer ok:false with the Slack error code, such as
// "channel_not_found" or "ratelimited" (the latter with HTTP 429 and Retry-After, as Slack does).
func (s *Server) FailNext(method, code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext[method] = code
}

// SlowNext makes the next chat.postMessage slow, as a Slack under load is: the message is taken
// and shown at once, and the answer saying where it is comes d later (after the caller's
// deadline, if d is longer).
func (s *Server) SlowNext(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.slowPost = d
}

// Messages returns a copy of what was accepted so far.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.messages...)
}

// WaitFor waits until n messages were accepted, or fails the test after a few seconds.
func (s *Server) WaitFor(tb testing.TB, n int) []Message {
	tb.Helper()
	deadline := time.After(5 * time.Second)
	for {
		if m := s.Messages(); len(m) >= n {
			return m
		}
		select {
		case <-s.changed:
		case <-deadline:
			tb.Fatalf("slack got %d messages, want %d", len(s.Messages()), n)
		}
	}
}

type response map[string]any

func slackErr(code string) response { return response{"ok": false, "error": code} }

func reply(w http.ResponseWriter, r response) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if r["error"] == "ratelimited" {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
	}
	_ = json.NewEncoder(w).Encode(r)
}

// check authenticates the call and takes a planned failure; it returns the Slack error, if any.
func (s *Server) check(r *http.Request, method string) string {
	if err := r.ParseForm(); err != nil {
		return "invalid_form_data"
	}
	tok := r.PostForm.Get("token")
	if tok == "" {
		tok = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	if tok == "" {
		return "not_authed"
	}
	if tok != s.Token {
		return "invalid_auth"
	}
	if code, ok := s.failNext[method]; ok {
		delete(s.failNext, method)
		return code
	}
	return ""
}

func (s *Server) record(m Message) {
	s.messages = append(s.messages, m)
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func (s *Server) message(r *http.Request, method string) (Message, string) {
	m := Message{Method: method, Channel: r.PostForm.Get("channel"), Text: r.PostForm.Get("text"),
		TS: r.PostForm.Get("ts"), User: r.PostForm.Get("user")}
	if b := r.PostForm.Get("blocks"); b != "" {
		if !json.Valid([]byte(b)) {
			return m, "invalid_blocks"
		}
		m.Blocks = json.RawMessage(b)
	}
	switch {
	case m.Channel == "":
		return m, "channel_not_found"
	case m.Text == "" && m.Blocks == nil:
		return m, "no_text"
	}
	return m, ""
}

func (s *Server) post(w http.ResponseWriter, r *http.Request) {
	s.serve(w, r, "chat.postMessage", s.posted)
}

func (s *Server) update(w http.ResponseWriter, r *http.Request) {
	s.serve(w, r, "chat.update", s.updated)
}

func (s *Server) ephemeral(w http.ResponseWriter, r *http.Request) {
	s.serve(w, r, "chat.postEphemeral", s.ephemeralPosted)
}

// serve answers a chat.* call: it authenticates it, takes a planned failure, refuses it while
// Slack is down, or else has take answer it and records it; then it tells the observer and
// answers, late while Slack is slow (a caller that gives up first gets no answer; what it sent
// stays).
func (s *Server) serve(w http.ResponseWriter, r *http.Request, method string, take func(*Message) (response, string)) {
	s.mu.Lock()
	m, code := s.read(r, method)
	refused, res := code == "" && s.refusing, slackErr(code)
	if refused {
		s.refused++
	}
	nth := s.refused
	if code == "" && !refused {
		if res, code = take(&m); code != "" {
			res = slackErr(code)
		} else {
			s.record(m)
		}
	}
	late, observe := s.lateness(method, code == "" && !refused), s.observe
	s.mu.Unlock()
	if observe != nil && (code == "" || refused) {
		observe(m, refused)
	}
	switch {
	case refused:
		refuse(w, nth)
	case late == 0 || s.held(r, late):
		reply(w, res)
	}
}

// read authenticates a chat.* call and reads its message; it returns the Slack error, if any.
func (s *Server) read(r *http.Request, method string) (Message, string) {
	if code := s.check(r, method); code != "" {
		return Message{Method: method}, code
	}
	return s.message(r, method)
}

// posted takes a chat.postMessage: the message gets its timestamp.
func (s *Server) posted(m *Message) (response, string) {
	s.seq++
	m.TS = fmt.Sprintf("1764482400.%06d", s.seq)
	s.live[m.Channel+"/"+m.TS] = true
	return response{"ok": true, "channel": m.Channel, "ts": m.TS, "message": response{
		"type": "message", "subtype": "bot_message", "text": m.Text, "ts": m.TS, "bot_id": "B0FAKEBOT",
		"blocks": m.Blocks}}, ""
}

// updated takes a chat.update of a message posted before.
func (s *Server) updated(m *Message) (response, string) {
	if !s.live[m.Channel+"/"+m.TS] {
		return nil, "message_not_found"
	}
	return response{"ok": true, "channel": m.Channel, "ts": m.TS, "text": m.Text,
		"message": response{"text": m.Text, "blocks": m.Blocks}}, ""
}

// ephemeralPosted takes a chat.postEphemeral, which names who sees it.
func (s *Server) ephemeralPosted(m *Message) (response, string) {
	if m.User == "" {
		return nil, "user_not_in_channel"
	}
	s.seq++
	m.TS = fmt.Sprintf("1764482400.%06d", s.seq)
	return response{"ok": true, "message_ts": m.TS}, ""
}

func (s *Server) groupMembers(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if code := s.check(r, "usergroups.users.list"); code != "" {
		reply(w, slackErr(code))
		return
	}
	users, ok := s.groups[r.PostForm.Get("usergroup")]
	if !ok {
		reply(w, slackErr("no_such_subteam"))
		return
	}
	reply(w, response{"ok": true, "users": users})
}
