package report

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	islack "github.com/bursar-dev/bursar/internal/slack"
)

// fakeSlack is a local stand-in for slack.com/api speaking its wire format for the calls a
// report post makes: files.getUploadURLExternal, the upload itself, files.completeUploadExternal
// and chat.postMessage. It records what arrives.
type fakeSlack struct {
	*httptest.Server
	mu       sync.Mutex
	uploads  [][]byte
	comments []string
	channels []string
	messages []string
}

func newFakeSlack(t *testing.T) *fakeSlack {
	f := &fakeSlack{}
	mux := http.NewServeMux()
	reply := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	authed := func(w http.ResponseWriter, r *http.Request) bool {
		_ = r.ParseForm()
		if r.Header.Get("Authorization") != "Bearer xoxb-test" && r.Form.Get("token") != "xoxb-test" {
			reply(w, map[string]any{"ok": false, "error": "invalid_auth"})
			return false
		}
		return true
	}
	mux.HandleFunc("/files.getUploadURLExternal", func(w http.ResponseWriter, r *http.Request) {
		if authed(w, r) {
			reply(w, map[string]any{"ok": true, "upload_url": f.URL + "/upload/F1", "file_id": "F1"})
		}
	})
	mux.HandleFunc("/upload/F1", func(w http.ResponseWriter, r *http.Request) {
		file, _, err := r.FormFile("file")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		b, _ := io.ReadAll(file)
		f.mu.Lock()
		f.uploads = append(f.uploads, b)
		f.mu.Unlock()
		_, _ = io.WriteString(w, "OK - "+time.Now().UTC().Format(time.RFC3339))
	})
	mux.HandleFunc("/files.completeUploadExternal", func(w http.ResponseWriter, r *http.Request) {
		if !authed(w, r) {
			return
		}
		f.mu.Lock()
		f.comments = append(f.comments, r.Form.Get("initial_comment"))
		f.channels = append(f.channels, r.Form.Get("channel_id"))
		f.mu.Unlock()
		reply(w, map[string]any{"ok": true, "files": []map[string]any{{"id": "F1", "title": "chart"}}})
	})
	mux.HandleFunc("/chat.postMessage", func(w http.ResponseWriter, r *http.Request) {
		if !authed(w, r) {
			return
		}
		f.mu.Lock()
		f.messages = append(f.messages, r.Form.Get("text"))
		f.mu.Unlock()
		reply(w, map[string]any{"ok": true, "channel": r.Form.Get("channel"), "ts": "1700000000.000100"})
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

func scheduler(t *testing.T, reports ...string) *Scheduler {
	st := history(t)
	return &Scheduler{Schedule: "0 9 * * MON", Reports: reports, Log: slog.New(slog.DiscardHandler),
		Run: func(ctx context.Context, name string, now time.Time) (*Result, error) {
			o := opts("09:00", "12:00", Location)
			o.Now = now
			return RunNamed(ctx, st, name, o)
		}}
}

func TestServeOncePrints(t *testing.T) {
	s := scheduler(t, "cost", "reclaims", "availability")
	var out bytes.Buffer
	s.Out = &out
	if err := s.Once(ctxT(t), at("12:30")); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Cost, ", "| aws-use1 | 27 |", "PNG would be attached", "## Reclaims, ",
		"## Availability, ", "| aws-use1 | 3 | 100 | 0 | 0 |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dry run lacks %q:\n%s", want, out.String())
		}
	}
	s.Reports = []string{"nonsense"}
	if err := s.Once(ctxT(t), at("12:30")); err == nil || !strings.Contains(err.Error(), "cost, tokens") {
		t.Errorf("unknown report: %v", err)
	}
}

func TestServePostsToSlackWithTheChart(t *testing.T) {
	fake := newFakeSlack(t)
	s := scheduler(t, "cost", "reclaims")
	poster, err := islack.NewReportPoster(islack.Config{BotToken: "xoxb-test", Channel: "C0REPORTS", APIURL: fake.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	s.Poster = poster
	if err := s.Once(ctxT(t), at("12:30")); err != nil {
		t.Fatal(err)
	}
	if _, err := islack.NewReportPoster(islack.Config{BotToken: "xoxb-test"}); err == nil || !strings.Contains(err.Error(), "BURSAR_SLACK_CHANNEL") {
		t.Errorf("a poster without a channel: %v", err)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.uploads) != 1 || len(fake.comments) != 1 {
		t.Fatalf("%d uploads and %d comments, want the cost chart with its report", len(fake.uploads), len(fake.comments))
	}
	if _, err := png.Decode(bytes.NewReader(fake.uploads[0])); err != nil {
		t.Errorf("the uploaded chart is not a PNG: %v", err)
	}
	if c := fake.comments[0]; !strings.Contains(c, "*Cost, ") || !strings.Contains(c, "| aws-use1 | 27 |") || fake.channels[0] != "C0REPORTS" {
		t.Errorf("comment %q in %q", c, fake.channels[0])
	}
	// reclaims has no chart: a plain message.
	if len(fake.messages) != 1 || !strings.Contains(fake.messages[0], "*Reclaims, ") {
		t.Errorf("messages = %q", fake.messages)
	}

	bad, err := islack.NewReportPoster(islack.Config{BotToken: "xoxb-wrong", Channel: "C0REPORTS", APIURL: fake.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	if err := bad.Post(ctxT(t), "t", "x", nil); err == nil || !strings.Contains(err.Error(), "invalid_auth") {
		t.Errorf("bad token: %v", err)
	}
}

func TestScheduleIsChecked(t *testing.T) {
	tests := []struct {
		name, schedule string
		wantNext       string
		wantErr        bool
	}{
		{"weekly", "0 9 * * MON", "2026-12-07T09:00:00Z", false},
		{"daily", "30 6 * * *", "2026-12-01T06:30:00Z", false},
		{"garbage", "every monday", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Scheduler{Schedule: tt.schedule}
			next, err := s.Parse(at("12:30"))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			if err == nil && next.Format(time.RFC3339) != tt.wantNext {
				t.Errorf("next = %v, want %s", next, tt.wantNext)
			}
		})
	}
}
