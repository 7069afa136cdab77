package promtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/health/healthtest"
)

// Server is a Prometheus started by Start.
type Server struct {
	URL string // http://127.0.0.1:PORT
	// Interval is the scrape interval it was started with.
	Interval time.Duration
}

// Job is a scrape job: its name and the host:port addresses serving /metrics.
type Job struct {
	Name    string
	Targets []string
}

// Config is what Start runs Prometheus with.
type Config struct {
	Interval  time.Duration // scrape and rule evaluation interval
	Jobs      []Job
	RuleFiles []string // rule files to load and evaluate
}

// Start runs `prometheus` as c says, its TSDB and log in t.TempDir(), on a free loopback port,
// and waits (up to a minute) until it answers /-/ready. It is stopped when the test ends; its
// log is printed if the test failed.
func Start(t testing.TB, c Config) *Server {
	t.Helper()
	bin := Binary(t, "prometheus")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	text, err := config(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := healthtest.FreeAddr(t)
	Run(t, bin, nil, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	s := &Server{URL: "http://" + addr, Interval: c.Interval}
	Eventually(t, time.Minute, "prometheus answers /-/ready", func() error {
		resp, err := http.Get(s.URL + "/-/ready")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %s", resp.Status)
		}
		return nil
	})
	return s
}

// config is prometheus.yml for c; the scrape timeout is the interval, the longest allowed.
func config(c Config) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "global:\n  scrape_interval: %s\n  scrape_timeout: %s\n  evaluation_interval: %s\n",
		c.Interval, c.Interval, c.Interval)
	if len(c.RuleFiles) > 0 {
		b.WriteString("rule_files:\n")
		for _, f := range c.RuleFiles {
			abs, err := filepath.Abs(f)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "  - %s\n", strconv.Quote(abs))
		}
	}
	b.WriteString("scrape_configs:\n")
	for _, j := range c.Jobs {
		quoted := make([]string, len(j.Targets))
		for i, tg := range j.Targets {
			quoted[i] = strconv.Quote(tg)
		}
		fmt.Fprintf(&b, "  - job_name: %q\n    static_configs:\n      - targets: [%s]\n", j.Name, strings.Join(quoted, ", "))
	}
	return b.String(), nil
}

// Target is one scrape target's state, as /api/v1/targets reports it.
type Target struct {
	Job       string
	URL       string
	Health    string // up, down, unknown
	LastError string
}

// Targets returns the active targets.
func (s *Server) Targets(ctx context.Context) ([]Target, error) {
	var data struct {
		ActiveTargets []struct {
			Labels    map[string]string `json:"labels"`
			ScrapeURL string            `json:"scrapeUrl"`
			Health    string            `json:"health"`
			LastError string            `json:"lastError"`
		} `json:"activeTargets"`
	}
	if err := s.get(ctx, "/api/v1/targets", nil, &data); err != nil {
		return nil, err
	}
	out := make([]Target, 0, len(data.ActiveTargets))
	for _, a := range data.ActiveTargets {
		out = append(out, Target{Job: a.Labels["job"], URL: a.ScrapeURL, Health: a.Health, LastError: a.LastError})
	}
	return out, nil
}

// Rule is one loaded rule's state, as /api/v1/rules reports it.
type Rule struct {
	Name      string
	Health    string // ok, err, unknown (not evaluated yet)
	LastError string
	State     string // an alert's: inactive, pending, firing
}

// Rules returns every loaded rule.
func (s *Server) Rules(ctx context.Context) ([]Rule, error) {
	var data struct {
		Groups []struct {
			Rules []struct {
				Name      string `json:"name"`
				Health    string `json:"health"`
				LastError string `json:"lastError"`
				State     string `json:"state"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := s.get(ctx, "/api/v1/rules", nil, &data); err != nil {
		return nil, err
	}
	var out []Rule
	for _, g := range data.Groups {
		for _, r := range g.Rules {
			out = append(out, Rule{Name: r.Name, Health: r.Health, LastError: r.LastError, State: r.State})
		}
	}
	return out, nil
}

// Sample is one series of an instant query's answer.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// Query evaluates expr at time at (the zero time: now) and returns the vector it gives; a
// scalar comes back as one sample without labels.
func (s *Server) Query(ctx context.Context, expr string, at time.Time) ([]Sample, error) {
	q := url.Values{"query": {expr}}
	if !at.IsZero() {
		q.Set("time", strconv.FormatFloat(float64(at.UnixNano())/1e9, 'f', 3, 64))
	}
	var data struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := s.get(ctx, "/api/v1/query", q, &data); err != nil {
		return nil, fmt.Errorf("query %s: %w", expr, err)
	}
	return decodeResult(data.ResultType, data.Result)
}

// get calls the API and decodes the "data" of a successful answer into out.
func (s *Server) get(ctx context.Context, path string, q url.Values, out any) error {
	u := s.URL + path
	if q != nil {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var env struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		return fmt.Errorf("%s: %s: %w", path, resp.Status, err)
	}
	if env.Status != "success" {
		return fmt.Errorf("%s: %s: %s", path, resp.Status, env.Error)
	}
	return json.Unmarshal(env.Data, out)
}

// Eventually calls f until it returns nil or within has passed, then fails the test with f's
// last error. Tests poll with it instead of asserting on how long something takes.
func Eventually(t testing.TB, within time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, within, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
