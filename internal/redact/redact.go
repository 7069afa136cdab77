// Package redact takes credentials out of URLs before they reach a log line, an error or a
// flag's echo. Endpoints are configured by people, and people put passwords in userinfo
// (nats://user:pass@host) and tokens in query strings (?token=...); a message that names an
// endpoint must still be safe to paste into an issue.
package redact

import (
	"errors"
	"net/url"
	"strings"
)

// Mask replaces every secret part of a URL.
const Mask = "REDACTED"

// unparseable stands in for a URL that does not parse: its parts cannot be told apart, so none
// of it is shown.
const unparseable = "(unparseable URL)"

// harmless are the query keys whose values are shown: protocol parameters of the price and
// metadata APIs Bursar calls (Azure's api-version, the metadata services' format), which say
// nothing secret and help read a failed request. Every other key's value is masked.
var harmless = map[string]bool{"api-version": true, "format": true, "$format": true}

// KeepsValue says whether URL shows the value of a query key: only the known-harmless ones, by
// their exact (case-insensitive) name.
func KeepsValue(key string) bool { return harmless[strings.ToLower(key)] }

// URL returns raw with its userinfo and every query value replaced by Mask and its fragment
// dropped; scheme, host, port, path and query keys stay, so the message still says where.
// Query values go whatever their key, but for an allow-list of harmless ones (KeepsValue),
// because a deny-list of key names ("token", "sig", ...) leaks the first name nobody thought of.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return unparseable
	}
	if u.User != nil {
		u.User = url.User(Mask)
	}
	if at := strings.LastIndex(u.Opaque, "@"); at >= 0 {
		// "user:pass@host:4222" (a NATS URL with no scheme) parses as scheme "user".
		return Mask + u.Opaque[at:]
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			if !KeepsValue(k) {
				q[k] = []string{Mask}
			}
		}
		u.RawQuery = q.Encode()
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// Error returns err with the URL of every *url.Error in its chain redacted from its message
// (net/http wraps each failed request in one, naming the full URL with its user and query), so
// wrappers that copied the text already (fmt.Errorf does) are covered too. errors.Is and
// errors.As see the same chain; the *url.Error values in it are not changed, because the caller
// may not own them: log and return the error Error gives back, not what errors.As finds in it.
func Error(err error) error {
	if err == nil {
		return nil
	}
	orig := err.Error()
	msg := orig
	walk(err, func(e error) {
		if ue, ok := e.(*url.Error); ok && ue.URL != "" {
			msg = strings.ReplaceAll(msg, ue.URL, URL(ue.URL))
		}
	})
	if msg == orig {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

// redactedError is an error whose message was redacted after it was written.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// walk calls f on err and everything it wraps, through both Unwrap forms.
func walk(err error, f func(error)) {
	for err != nil {
		f(err)
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e, f)
			}
			return
		}
		err = errors.Unwrap(err)
	}
}
