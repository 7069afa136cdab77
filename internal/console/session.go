package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// KeyFile is where, under the data dir, the console keeps the key that signs its session cookies,
// so sessions survive a restart and nobody without the data dir can forge one.
const KeyFile = "console/session.key"

// sessionTTL is how long a login lasts.
const sessionTTL = 12 * time.Hour

// sessionCookie is the session cookie's name.
const sessionCookie = "bursar_session"

// session is a logged-in browser: who, until when, and a random id the CSRF token is bound to.
type session struct {
	Who     string
	Expires time.Time
	ID      string
}

// signer signs and checks sessions and CSRF tokens with one key.
type signer struct{ key []byte }

// loadKey reads the session key under dataDir, making it (0600) when missing. With no data dir
// the key lives in memory: sessions end with the process.
func loadKey(dataDir string) (signer, error) {
	if dataDir == "" {
		return newKey()
	}
	path := filepath.Join(dataDir, KeyFile)
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(data)))
		if err != nil || len(key) < 32 {
			return signer{}, fmt.Errorf("%s: not a session key (32 bytes in base64); delete it to make a new one, which logs everyone out", path)
		}
		return signer{key: key}, nil
	case errors.Is(err, fs.ErrNotExist):
		s, err := newKey()
		if err != nil {
			return signer{}, err
		}
		return s, writePrivate(path, []byte(base64.StdEncoding.EncodeToString(s.key)+"\n"))
	default:
		return signer{}, fmt.Errorf("reading the console's session key: %w", err)
	}
}

func newKey() (signer, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return signer{}, fmt.Errorf("making a session key: %w", err)
	}
	return signer{key: key}, nil
}

// mac is the key's HMAC-SHA256 of the parts, each length-prefixed so no two lists sign alike.
func (s signer) mac(parts ...string) []byte {
	m := hmac.New(sha256.New, s.key)
	for _, p := range parts {
		fmt.Fprintf(m, "%d:%s", len(p), p)
	}
	return m.Sum(nil)
}

// newSession starts a session for who at now.
func (s signer) newSession(who string, now time.Time) (session, error) {
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return session{}, fmt.Errorf("making a session: %w", err)
	}
	return session{Who: who, Expires: now.Add(sessionTTL), ID: base64.RawURLEncoding.EncodeToString(id)}, nil
}

// encode is the cookie value of a session: its fields and their signature.
func (s signer) encode(ss session) string {
	exp := strconv.FormatInt(ss.Expires.Unix(), 10)
	who := base64.RawURLEncoding.EncodeToString([]byte(ss.Who))
	sig := base64.RawURLEncoding.EncodeToString(s.mac("session", who, exp, ss.ID))
	return strings.Join([]string{who, exp, ss.ID, sig}, ".")
}

// decode checks a cookie value and returns its session if it is signed by this key and not
// expired at now.
func (s signer) decode(v string, now time.Time) (session, bool) {
	f := strings.Split(v, ".")
	if len(f) != 4 {
		return session{}, false
	}
	sig, err := base64.RawURLEncoding.DecodeString(f[3])
	if err != nil || !hmac.Equal(sig, s.mac("session", f[0], f[1], f[2])) {
		return session{}, false
	}
	who, err := base64.RawURLEncoding.DecodeString(f[0])
	exp, err2 := strconv.ParseInt(f[1], 10, 64)
	if err != nil || err2 != nil || checkIdentity(string(who)) != nil {
		return session{}, false
	}
	ss := session{Who: string(who), Expires: time.Unix(exp, 0), ID: f[2]}
	if !now.Before(ss.Expires) {
		return session{}, false
	}
	return ss, true
}

// csrf is the CSRF token of a binding: a session's id, or a proxy-given identity. It is a
// signature, so the server keeps nothing and a page from another site cannot know it.
func (s signer) csrf(binding string) string {
	return base64.RawURLEncoding.EncodeToString(s.mac("csrf", binding))
}

// checkCSRF reports whether token is binding's CSRF token.
func (s signer) checkCSRF(binding, token string) bool {
	got, err := base64.RawURLEncoding.DecodeString(token)
	return err == nil && token != "" && hmac.Equal(got, s.mac("csrf", binding))
}
