package console

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// login logs c in with token and reports the status of POST /login.
func (f *fixture) login(t *testing.T, c *http.Client, token string) int {
	t.Helper()
	status, _ := f.post(t, c, "/login", url.Values{"token": {token}, "next": {"/approvals"}}, nil)
	return status
}

// csrfOf reads the CSRF token the page gives its forms.
func csrfOf(t *testing.T, page string) string {
	t.Helper()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token on the page:\n%s", page)
	}
	return m[1]
}

func TestLoginWithAGoodAndABadToken(t *testing.T) {
	f := newFixture(t, history(t), nil)
	token, err := IssueToken(f.dir, "U0APPROVER")
	if err != nil {
		t.Fatal(err)
	}
	bad := f.client()
	if status := f.login(t, bad, token+"x"); status != http.StatusUnauthorized {
		t.Errorf("login with a wrong token: %d, want 401", status)
	}
	if _, page := get(t, bad, f.ts.URL+"/approvals"); strings.Contains(page, `data-test="identity"`) {
		t.Error("a wrong token started a session")
	}
	good := f.client()
	if status := f.login(t, good, token); status != http.StatusSeeOther {
		t.Fatalf("login with the token: %d, want 303", status)
	}
	u, _ := url.Parse(f.ts.URL)
	cookies := good.Jar.Cookies(u)
	if len(cookies) != 1 || cookies[0].Name != sessionCookie || strings.Contains(cookies[0].Value, token) {
		t.Fatalf("session cookies %v", cookies)
	}
	if _, page := get(t, good, f.ts.URL+"/approvals"); !strings.Contains(page, `data-test="identity">U0APPROVER<`) {
		t.Error("the page does not show who is logged in")
	}
	// A login from another site's form is refused even with a good token.
	if status, _ := f.post(t, f.client(), "/login", url.Values{"token": {token}}, map[string]string{"Origin": "https://evil.example"}); status != http.StatusForbidden {
		t.Errorf("cross-site login: %d, want 403", status)
	}
}

func TestLoginCookieAttributes(t *testing.T) {
	f := newFixture(t, history(t), nil)
	token, _ := IssueToken(f.dir, "U0APPROVER")
	req, _ := http.NewRequest(http.MethodPost, f.ts.URL+"/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", f.ts.URL)
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	c := resp.Cookies()
	if len(c) != 1 || !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode || c[0].Secure {
		t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict, not Secure over plain loopback HTTP", c)
	}
}

func TestApproverDecidesOnceWithCSRF(t *testing.T) {
	f := newFixture(t, history(t), nil)
	token, _ := IssueToken(f.dir, "U0APPROVER")
	c := f.client()
	f.login(t, c, token)
	_, page := get(t, c, f.ts.URL+"/approvals")
	if !strings.Contains(page, `data-test="approve-p-held-2"`) || !strings.Contains(page, `data-test="reject-p-held-2"`) {
		t.Fatalf("an approver sees no buttons:\n%s", page)
	}
	csrf := csrfOf(t, page)
	status, _ := f.post(t, c, "/approvals/p-held-2/approve", url.Values{"csrf": {csrf}}, nil)
	if status != http.StatusSeeOther {
		t.Fatalf("approve: %d, want 303 back to the page", status)
	}
	if got := f.appr.decided(); !slices.Equal(got, []string{"p-held-2 true U0APPROVER"}) {
		t.Errorf("Decide calls %v, want one approval by U0APPROVER", got)
	}
}

func TestForgedPostsChangeNothing(t *testing.T) {
	f := newFixture(t, history(t), nil)
	token, _ := IssueToken(f.dir, "U0APPROVER")
	c := f.client()
	f.login(t, c, token)
	_, page := get(t, c, f.ts.URL+"/approvals")
	csrf := csrfOf(t, page)
	tests := []struct {
		name   string
		form   url.Values
		header map[string]string
	}{
		{"no CSRF token", url.Values{}, nil},
		{"a wrong CSRF token", url.Values{"csrf": {csrf + "x"}}, nil},
		{"another site's origin", url.Values{"csrf": {csrf}}, map[string]string{"Origin": "https://evil.example"}},
		{"no origin nor referer", url.Values{"csrf": {csrf}}, map[string]string{"Origin": ""}},
		{"another site's referer", url.Values{"csrf": {csrf}}, map[string]string{"Origin": "", "Referer": "https://evil.example/x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, path := range []string{"/approvals/p-held-2/approve", "/api/v1/holds/p-held-2/reject"} {
				status, body := f.post(t, c, path, tt.form, tt.header)
				if status != http.StatusForbidden || !strings.Contains(body, "refused") {
					t.Errorf("POST %s: %d, want 403 saying why\n%s", path, status, body)
				}
			}
		})
	}
	if got := f.appr.decided(); len(got) != 0 {
		t.Errorf("forged POSTs reached Decide: %v", got)
	}
	// The same POST from the page, with its token in the header as fetch() sends it, goes through.
	if status, body := f.post(t, c, "/api/v1/holds/p-held-2/reject", nil, map[string]string{"X-CSRF-Token": csrf}); status != 200 {
		t.Errorf("POST with X-CSRF-Token: %d %s", status, body)
	}
}

func TestReaderWithoutIdentityGetsNoButtonAndCannotPost(t *testing.T) {
	f := newFixture(t, history(t), nil)
	c := f.client()
	_, page := get(t, c, f.ts.URL+"/approvals")
	if !strings.Contains(page, `data-test="hold-p-held-2"`) {
		t.Fatalf("the pending hold is not shown to a reader:\n%s", page)
	}
	if strings.Contains(page, `data-test="approve-`) || strings.Contains(page, `name="csrf"`) {
		t.Error("a reader without identity is offered a button")
	}
	for _, path := range []string{"/approvals/p-held-2/approve", "/api/v1/holds/p-held-2/approve"} {
		if status, body := f.post(t, c, path, url.Values{"csrf": {"x"}}, nil); status != http.StatusForbidden || !strings.Contains(body, "log in") {
			t.Errorf("POST %s without identity: %d %s", path, status, body)
		}
	}
	// A logged-in user who is not an approver sees no button either.
	token, _ := IssueToken(f.dir, "U0READER")
	f.login(t, c, token)
	if _, page := get(t, c, f.ts.URL+"/approvals"); strings.Contains(page, `data-test="approve-`) || !strings.Contains(page, "not among its approvers") {
		t.Error("a logged-in non-approver is offered a button, or not told why there is none")
	}
	if got := f.appr.decided(); len(got) != 0 {
		t.Errorf("Decide called %v", got)
	}
}

func TestRefusedDecisionSaysWhy(t *testing.T) {
	for _, tt := range []struct {
		err        error
		wantStatus int
	}{
		{fmt.Errorf("plan p-held-2: %w: decided by U0OTHER at 11:40", ErrNotPending), http.StatusConflict},
		{fmt.Errorf("U0APPROVER: %w", ErrNotApprover), http.StatusForbidden},
		{fmt.Errorf("plan p-held-2: deadline 2026-11-30T12:50:00Z passed: %w", ErrTimedOut), http.StatusConflict},
	} {
		f := newFixture(t, history(t), nil)
		f.appr.err = tt.err
		token, _ := IssueToken(f.dir, "U0APPROVER")
		c := f.client()
		f.login(t, c, token)
		_, page := get(t, c, f.ts.URL+"/approvals")
		csrf := csrfOf(t, page)
		status, page := f.post(t, c, "/approvals/p-held-2/approve", url.Values{"csrf": {csrf}}, nil)
		if status != tt.wantStatus || !strings.Contains(page, `data-test="decision-error"`) || !strings.Contains(html.UnescapeString(page), tt.err.Error()) {
			t.Errorf("%v: page %d; want %d saying why", tt.err, status, tt.wantStatus)
		}
		status, body := f.post(t, c, "/api/v1/holds/p-held-2/approve", nil, map[string]string{"X-CSRF-Token": csrf})
		var e apiErr
		if json.Unmarshal([]byte(body), &e) != nil || status != tt.wantStatus || !strings.Contains(e.Error, tt.err.Error()) {
			t.Errorf("%v: API %d %s", tt.err, status, body)
		}
	}
}

func TestBearerTokenForTheAPI(t *testing.T) {
	f := newFixture(t, history(t), nil)
	token, _ := IssueToken(f.dir, "U0APPROVER")
	do := func(auth string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, f.ts.URL+"/api/v1/holds/p-held-2/approve", nil)
		req.Header.Set("Authorization", auth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = fmt.Fprint(&b, resp.Status)
		return resp.StatusCode, b.String()
	}
	if status, _ := do("Bearer " + token + "x"); status != http.StatusUnauthorized {
		t.Errorf("a wrong bearer token: %d, want 401", status)
	}
	if status, _ := do("Bearer " + token); status != http.StatusOK {
		t.Errorf("the bearer token: %d, want 200", status)
	}
	if got := f.appr.decided(); !slices.Equal(got, []string{"p-held-2 true U0APPROVER"}) {
		t.Errorf("Decide calls %v", got)
	}
}

func TestReadOnlyConsoleDecidesNothing(t *testing.T) {
	f := newFixture(t, history(t), func(o *Options) { o.Approvals = nil })
	token, _ := IssueToken(f.dir, "U0APPROVER")
	c := f.client()
	f.login(t, c, token)
	_, page := get(t, c, f.ts.URL+"/approvals")
	if strings.Contains(page, `data-test="approve-`) || !strings.Contains(page, "read-only") {
		t.Errorf("report serve's console offers buttons, or does not say it is read-only")
	}
	if status, _ := f.post(t, c, "/api/v1/holds/p-held-2/approve", nil, map[string]string{"X-CSRF-Token": csrfOf(t, page)}); status != http.StatusForbidden {
		t.Errorf("a decision on a read-only console: %d, want 403", status)
	}
}
