package slacktest

import (
	"encoding/json"
	"net/http"
	"time"
)

// outage is how Slack is failing: slow to answer, or refusing every call.
type outage struct {
	slowPost time.Duration // how late the next chat.postMessage is answered (SlowNext)
	slow     time.Duration // while Slow: how late every call is answered
	delay    time.Duration // the last Slow's delay, which bounds Up's wait
	refusing bool
	refused  int // calls refused while down
	holding  int // answers held back now
}

// Slow makes Slack take every chat.* call from now on and answer it d later (after the caller's
// deadline, if d is longer), as a Slack under load, until Up.
func (s *Server) Slow(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.slow, s.delay, s.refusing = d, d, false
}

// Refuse makes Slack refuse every chat.* call from now on, as a Slack that is down: in turn
// HTTP 429 ratelimited with Retry-After: 1, as Slack rate limits, and a 503 from its edge, until
// Up. Answers held back by Slow still come.
func (s *Server) Refuse() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.slow, s.refusing = 0, true
}

// Up answers every call at once again, once the answers Slow held back have gone out (waiting
// at most twice its delay): the outage ends with its last slow answer.
func (s *Server) Up() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for end := time.Now().Add(2 * s.delay); s.holding > 0 && time.Now().Before(end); {
		s.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
		s.mu.Lock()
	}
	s.slow, s.refusing = 0, false
}

// Answering reports whether Slack answers at once: neither Slow nor Refuse is in force.
func (s *Server) Answering() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.slow == 0 && !s.refusing
}

// Refused counts the calls refused while down.
func (s *Server) Refused() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// lateness is how late a call to method is answered; a call not taken is answered at once.
// s.mu is held.
func (s *Server) lateness(method string, taken bool) time.Duration {
	switch {
	case !taken:
		return 0
	case method == "chat.postMessage" && s.slowPost > 0:
		d := s.slowPost
		s.slowPost = 0
		return d
	}
	return s.slow
}

// held holds an answer back for d; it reports false when the caller gave up or the server
// closed first, and no answer is to be written.
func (s *Server) held(r *http.Request, d time.Duration) bool {
	s.mu.Lock()
	s.holding++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.holding--
		s.mu.Unlock()
	}()
	select {
	case <-time.After(d):
		return true
	case <-r.Context().Done():
	case <-s.done:
	}
	return false
}

// refuse answers the nth call refused while down: odd ones as Slack rate limits (HTTP 429,
// Retry-After in seconds), even ones as its edge fails (a 503 without JSON).
func refuse(w http.ResponseWriter, nth int) {
	if nth%2 == 1 {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		_ = json.NewEncoder(w).Encode(slackErr("ratelimited"))
		return
	}
	http.Error(w, "upstream connect error", http.StatusServiceUnavailable)
}
