package reclaim

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// Credentials in the endpoints the tests below configure; none may reach an error or a log line.
var endpointSecrets = []string{"alice", "s3cret", "t0ken"}

func showsSecret(s string) string {
	for _, sec := range endpointSecrets {
		if strings.Contains(s, sec) {
			return sec
		}
	}
	return ""
}

// withCredentials returns base (http://127.0.0.1:port) with a user, a password and a token
// query parameter, the way someone might configure a metadata proxy.
func withCredentials(base string) string {
	return strings.Replace(base, "http://", "http://alice:s3cret@", 1) + "/?token=t0ken"
}

// closedEndpoint is an address where nothing listens: every request fails inside net/http,
// whose error quotes the URL.
func closedEndpoint(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// answering is a metadata service that answers every request with status (and the headers a
// real one sends, so a 200 gets as far as the watcher's own checks).
func answering(t *testing.T, status int) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Metadata-Flavor", "Google")
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// logLines is a log sink that hands each line to the test as the watcher writes it.
type logLines chan string

func (l logLines) Write(p []byte) (int, error) {
	l <- string(p)
	return len(p), nil
}

// TestEndpointCredentialsNeverShow runs every watcher against endpoints carrying a user, a
// password and a token, where the service is down, answers 5xx or answers nothing useful, and
// checks the poll error and everything logged (start line and failure line).
func TestEndpointCredentialsNeverShow(t *testing.T) {
	type watcher struct {
		poll func(context.Context) error
		run  Runner
	}
	kinds := map[string]func(endpoint string, d Deps) watcher{
		"aws_imds": func(ep string, d Deps) watcher {
			w := NewAWSIMDSWatcher(AWSIMDSConfig{NodeConfig: NodeConfig{Location: "l"}, Endpoint: ep,
				Interval: time.Hour, Timeout: time.Second}, d)
			return watcher{w.Poll, w}
		},
		"gcp_metadata": func(ep string, d Deps) watcher {
			w := NewGCPWatcher(GCPMetadataConfig{NodeConfig: NodeConfig{Location: "l"}, Endpoint: ep,
				WaitTime: time.Second, RetryDelay: time.Hour}, d)
			return watcher{func(ctx context.Context) error { _, err := w.Observe(ctx, gcpPreempted.path, ""); return err }, w}
		},
		"azure_scheduled_events": func(ep string, d Deps) watcher {
			w := NewAzureWatcher(AzureEventsConfig{NodeConfig: NodeConfig{Location: "l"}, Endpoint: ep,
				Interval: time.Hour, Timeout: time.Second}, d)
			return watcher{w.Poll, w}
		},
		"aws_eventbridge": func(ep string, d Deps) watcher {
			ac := aws.Config{Region: "us-east-1", RetryMaxAttempts: 1,
				Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")}
			w := NewEventBridgeWatcher(AWSEventBridgeConfig{QueueURL: ep, Region: "us-east-1", Location: "l",
				WaitTime: time.Second}, NewSQSClientFrom(ac, ep), d)
			return watcher{w.Poll, w}
		},
	}
	services := map[string]func(t *testing.T) string{
		"down":      closedEndpoint,
		"5xx":       func(t *testing.T) string { return answering(t, http.StatusBadGateway) },
		"empty 200": func(t *testing.T) string { return answering(t, http.StatusOK) },
	}
	for kind, build := range kinds {
		for state, service := range services {
			if kind == "aws_eventbridge" && state == "empty 200" {
				continue // an empty receive is a queue with nothing in it, not a failure
			}
			t.Run(kind+"/"+state, func(t *testing.T) {
				logs := make(logLines, 64)
				d := Deps{Publisher: newRecorder(), Logger: slog.New(slog.NewTextHandler(logs, nil))}
				w := build(withCredentials(service(t)), d)
				err := w.poll(context.Background())
				if err == nil {
					t.Fatal("poll of a broken service succeeded")
				}
				if sec := showsSecret(err.Error()); sec != "" {
					t.Errorf("poll error shows %q: %v", sec, err)
				}
				logged := runUntilLogged(t, w.run, logs, "poll failed")
				if sec := showsSecret(logged); sec != "" {
					t.Errorf("log shows %q:\n%s", sec, logged)
				}
			})
		}
	}
}

// runUntilLogged runs r until it logs a line holding want, stops it, and returns all it logged.
func runUntilLogged(t *testing.T, r Runner, logs logLines, want string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	var all strings.Builder
	patience := time.After(10 * time.Second)
	for !strings.Contains(all.String(), want) {
		select {
		case line := <-logs:
			all.WriteString(line)
		case <-patience:
			cancel()
			t.Fatalf("no %q logged in 10s:\n%s", want, all.String())
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for len(logs) > 0 {
		all.WriteString(<-logs)
	}
	return all.String()
}

// TestConfigErrorHidesEndpointCredentials: a rejected endpoint is echoed without its secrets.
func TestConfigErrorHidesEndpointCredentials(t *testing.T) {
	c := Config{GCP: &GCPMetadataConfig{NodeConfig: NodeConfig{Location: "l"},
		Endpoint: "ftp://alice:s3cret@metadata/?token=t0ken"}}
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "gcp_metadata.endpoint") {
		t.Fatalf("Validate() = %v, want a problem with gcp_metadata.endpoint", err)
	}
	if sec := showsSecret(err.Error()); sec != "" {
		t.Errorf("Validate() = %v shows %q", err, sec)
	}
}
