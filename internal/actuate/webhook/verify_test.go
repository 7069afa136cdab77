package webhook_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/actuate/webhook"
)

// now is the receiver's clock in the tests below: the timestamp of the package doc's example.
var now = time.Unix(1767261600, 0)

// wireBody is what Scale sends: an action encoded as the receiver gets it.
func wireBody(t testing.TB) []byte {
	b, err := json.Marshal(actuate.Target{ActionID: "act-1",
		Group: actuate.Group{Workload: "svc", Location: "lambda", Market: "on_demand"}, Replicas: 3, Kind: "launch"})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestVerifyRejectsMalformedRequests: whatever a caller puts in the two headers and the body,
// Verify refuses it unless it is exactly what Sign wrote, fresh, and says which part was wrong.
func TestVerifyRejectsMalformedRequests(t *testing.T) {
	body := wireBody(t)
	ts := strconv.FormatInt(now.Unix(), 10)
	good := webhook.Sign(secret, ts, body)
	tests := []struct {
		name    string
		ts      string
		sig     string
		body    []byte
		wantErr string // "" for accepted
	}{
		{name: "as signed", ts: ts, sig: good, body: body},
		{name: "no timestamp", ts: "", sig: good, body: body, wantErr: "Bursar-Timestamp"},
		{name: "timestamp not a number", ts: "yesterday", sig: good, body: body, wantErr: "Bursar-Timestamp"},
		{name: "timestamp with a fraction", ts: ts + ".5", sig: good, body: body, wantErr: "Bursar-Timestamp"},
		{name: "timestamp in milliseconds", ts: ts + "000", sig: good, body: body, wantErr: "away from now"},
		{name: "timestamp past int64", ts: "99999999999999999999", sig: good, body: body, wantErr: "Bursar-Timestamp"},
		{name: "largest int64 timestamp", ts: "9223372036854775807", sig: good, body: body, wantErr: "away from now"},
		{name: "smallest int64 timestamp", ts: "-9223372036854775808", sig: good, body: body, wantErr: "away from now"},
		{name: "timestamp with spaces", ts: " " + ts, sig: good, body: body, wantErr: "Bursar-Timestamp"},
		{name: "a long timestamp is quoted short", ts: strings.Repeat("9x", 5000), sig: good, body: body, wantErr: "Bursar-Timestamp"},
		{name: "fresh timestamp the signature does not cover", ts: strconv.FormatInt(now.Unix()+1, 10), sig: good, body: body,
			wantErr: "signature does not match"},
		{name: "no signature", ts: ts, sig: "", body: body, wantErr: "signature does not match"},
		{name: "hex without the version", ts: ts, sig: strings.TrimPrefix(good, "v1="), body: body, wantErr: "signature does not match"},
		{name: "an unknown version", ts: ts, sig: "v0=" + strings.TrimPrefix(good, "v1="), body: body, wantErr: "signature does not match"},
		{name: "uppercase hex", ts: ts, sig: "v1=" + strings.ToUpper(strings.TrimPrefix(good, "v1=")), body: body,
			wantErr: "signature does not match"},
		{name: "truncated signature", ts: ts, sig: good[:len(good)-2], body: body, wantErr: "signature does not match"},
		{name: "two signatures", ts: ts, sig: good + "," + good, body: body, wantErr: "signature does not match"},
		{name: "body changed", ts: ts, sig: good, body: []byte(strings.Replace(string(body), `"replicas":3`, `"replicas":30`, 1)),
			wantErr: "signature does not match"},
		{name: "body empty", ts: ts, sig: good, body: nil, wantErr: "signature does not match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := webhook.Verify(secret, tt.ts, tt.sig, tt.body, now, 5*time.Minute)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Verify() = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Verify() = %v, want an error containing %q", err, tt.wantErr)
			case err != nil && len(err.Error()) > 200:
				t.Errorf("Verify() error is %d bytes long; a caller's header must not fill the log", len(err.Error()))
			}
		})
	}
}

// FuzzVerify feeds Verify whatever may arrive in the Bursar-Timestamp and Bursar-Signature
// headers and the body. It must never panic, accept only what Sign wrote for a timestamp within
// maxAge, and always accept Sign's own output for the same body at the receiver's time.
func FuzzVerify(f *testing.F) {
	body := wireBody(f)
	ts := strconv.FormatInt(now.Unix(), 10)
	for _, seed := range []struct {
		ts, sig string
		body    []byte
	}{
		{ts, webhook.Sign(secret, ts, body), body},
		{"1767261300", webhook.Sign(secret, "1767261300", body), body},
		{"1767258000", webhook.Sign(secret, "1767258000", body), body},
		{"", "", nil},
		{"+1767261600", webhook.Sign(secret, "+1767261600", body), body},
		{"9223372036854775807", "v1=00", []byte("{}")},
		{"-9223372036854775808", "v1=", []byte(`{"action_id":"`)},
		{"1767261600.0", "V1=AB", body},
	} {
		f.Add(secret, seed.ts, seed.sig, seed.body)
	}
	const maxAge = 5 * time.Minute
	f.Fuzz(func(t *testing.T, key []byte, ts, sig string, body []byte) {
		err := webhook.Verify(key, ts, sig, body, now, maxAge)
		if err == nil {
			if sig != webhook.Sign(key, ts, body) {
				t.Fatalf("accepted signature %q for ts %q, which Sign did not write", sig, ts)
			}
			sec, perr := strconv.ParseInt(ts, 10, 64)
			if perr != nil {
				t.Fatalf("accepted timestamp %q, which is not Unix seconds", ts)
			}
			if d := now.Sub(time.Unix(sec, 0)); d > maxAge || d < -maxAge {
				t.Fatalf("accepted timestamp %q, %v away from now", ts, d)
			}
		}
		fresh := strconv.FormatInt(now.Unix(), 10)
		if err := webhook.Verify(key, fresh, webhook.Sign(key, fresh, body), body, now, maxAge); err != nil {
			t.Fatalf("refused its own fresh signature: %v", err)
		}
	})
}
