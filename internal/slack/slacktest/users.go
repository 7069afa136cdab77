package slacktest

import (
	"net/http"
	"strings"
)

// SetUser gives the user id an e-mail, for users.lookupByEmail.
func (s *Server) SetUser(email, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[email] = id
}

// lookupByEmail answers users.lookupByEmail as Slack does: the user, or users_not_found.
func (s *Server) lookupByEmail(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if code := s.check(r, "users.lookupByEmail"); code != "" {
		reply(w, slackErr(code))
		return
	}
	email := r.PostForm.Get("email")
	id, ok := s.users[email]
	if !ok {
		reply(w, slackErr("users_not_found"))
		return
	}
	reply(w, response{"ok": true, "user": response{"id": id, "name": strings.Split(email, "@")[0],
		"profile": response{"email": email}}})
}
