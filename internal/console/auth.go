package console

import (
	"net/http"
	"path/filepath"
	"strings"
)

// identify returns who sent r. A bearer token that is not recognised is an error (ok false), so a
// script with a stale token hears so instead of silently reading as nobody.
func (s *Server) identify(r *http.Request) (caller, bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		token, found := strings.CutPrefix(h, "Bearer ")
		if !found {
			return caller{}, false
		}
		who, ok := s.lookup(strings.TrimSpace(token))
		return caller{Who: who, Via: viaBearer}, ok
	}
	if name := s.access.TrustedHeader; name != "" && s.access.fromProxy(r) {
		if who := strings.TrimSpace(r.Header.Get(name)); who != "" && checkIdentity(who) == nil {
			binding := "proxy:" + who
			return caller{Who: who, Via: viaProxy, CSRF: s.key.csrf(binding), binding: binding}, true
		}
	}
	if c, err := r.Cookie(sessionCookie); err == nil {
		if ss, ok := s.key.decode(c.Value, s.now()); ok {
			binding := "session:" + ss.ID
			return caller{Who: ss.Who, Via: viaSession, CSRF: s.key.csrf(binding), binding: binding}, true
		}
	}
	return caller{}, true
}

// lookup finds the identity of a token in the tokens file, read afresh so a token issued while
// the console runs works at once.
func (s *Server) lookup(token string) (string, bool) {
	if s.access.DataDir == "" || token == "" {
		return "", false
	}
	tokens, err := readTokens(filepath.Join(s.access.DataDir, TokensFile))
	if err != nil {
		s.log.Warn("console login: no tokens to check against", "err", err)
		return "", false
	}
	return lookupToken(tokens, token)
}

// canWrite says why c may not send r, a write, or "" when it may: an identity, and for the
// credentials a browser sends by itself (cookie, proxy header), the same origin and the CSRF
// token of c's session.
func (s *Server) canWrite(r *http.Request, c caller) string {
	if c.Who == "" {
		return "no identity: log in with a console token (arbiter console token --as YOUR-SLACK-ID) to approve or reject"
	}
	if c.Via == viaBearer {
		return ""
	}
	if !s.access.sameOrigin(r) {
		return "refused: the request did not come from a page of this console (Origin/Referer)"
	}
	token := r.Header.Get("X-CSRF-Token")
	if token == "" {
		token = r.PostFormValue("csrf")
	}
	if !s.key.checkCSRF(c.binding, token) {
		return "refused: missing or stale CSRF token; reload the page and try again"
	}
	return ""
}

// login is POST /login: a token in the form's "token" field starts a session. The token never
// travels in a URL and is never logged.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if !s.access.sameOrigin(r) {
		s.page(w, r, http.StatusForbidden, "login", loginView{Error: "refused: the login did not come from this console's login page", Tokens: s.access.DataDir != ""})
		return
	}
	who, ok := s.lookup(strings.TrimSpace(r.PostFormValue("token")))
	if !ok {
		s.log.Info("console login refused", "remote", r.RemoteAddr)
		s.page(w, r, http.StatusUnauthorized, "login", loginView{Error: "token not recognised: make one with arbiter console token --as YOUR-ID", Tokens: s.access.DataDir != ""})
		return
	}
	ss, err := s.key.newSession(who, s.now())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: s.key.encode(ss), Path: "/", MaxAge: int(sessionTTL.Seconds()),
		HttpOnly: true, Secure: r.TLS != nil || s.access.tls != nil, SameSite: http.SameSiteStrictMode})
	s.log.Info("console login", "who", who)
	http.Redirect(w, r, localPath(r.PostFormValue("next")), http.StatusSeeOther)
}

// logout is POST /logout: it clears the session cookie.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	c, _ := s.identify(r)
	if c.Via == viaSession {
		if why := s.canWrite(r, c); why != "" {
			s.refuse(w, r, http.StatusForbidden, why)
			return
		}
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: r.TLS != nil || s.access.tls != nil, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// localPath keeps a redirect target on this console: a path, never another site.
func localPath(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.ContainsAny(p, "\\\r\n") {
		return "/"
	}
	return p
}
