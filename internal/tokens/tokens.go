// Package tokens scrapes inference servers' Prometheus pages (vLLM, TGI) for how many prompt and
// generated tokens and requests each replica has served, and publishes them as tokens.sample, the
// denominator of cost per million tokens and the arbiter's measure of demand.
//
// Counters are published as the server reports them, cumulative since it started. When one goes
// down (the server restarted) the sample is marked Reset, so consumers start a new series
// instead of reading a huge negative increase.
package tokens

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/redact"
)

// Publisher sends a round's samples to the bus together, as batch messages (one per location
// and workload). The JetStream publisher in internal/bus satisfies it.
type Publisher interface {
	PublishBatch(ctx context.Context, evs []events.Event) error
}

// Target is one replica's metrics endpoint.
type Target struct {
	URL      string `yaml:"url"`    // e.g. http://10.0.3.7:8000/metrics
	Server   Server `yaml:"server"` // vllm or tgi
	Location string `yaml:"location"`
	Workload string `yaml:"workload"`
	Replica  string `yaml:"replica,omitempty"` // default: the URL's host:port
}

// Config is the `scrape:` section of collector.yaml.
type Config struct {
	Interval time.Duration `yaml:"interval,omitempty"` // default 30s
	Timeout  time.Duration `yaml:"timeout,omitempty"`  // per scrape, default 10s
	Targets  []Target      `yaml:"targets"`
}

// FieldError is a bad config value; Field is its path under `scrape:`, e.g. "targets[2].server".
type FieldError struct {
	Field   string
	Problem string
}

func (e *FieldError) Error() string { return fmt.Sprintf("field %s: %s", e.Field, e.Problem) }

// Validate returns the first bad field.
func (c Config) Validate() error {
	if c.Interval < 0 || c.Timeout < 0 {
		return &FieldError{"interval", "interval and timeout must not be negative"}
	}
	series := map[string]int{} // location/workload/replica → first target
	for i, t := range c.Targets {
		at := fmt.Sprintf("targets[%d]", i)
		u, err := url.Parse(t.URL)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			return &FieldError{at + ".url", fmt.Sprintf("must be an http(s) URL of a metrics page, got %q", redact.URL(t.URL))}
		case t.Server != VLLM && t.Server != TGI:
			return &FieldError{at + ".server", fmt.Sprintf("must be vllm or tgi, got %q", t.Server)}
		case t.Location == "":
			return &FieldError{at + ".location", "must name the Bursar location the replica runs in"}
		case t.Workload == "":
			return &FieldError{at + ".workload", "must name the workload the replica serves"}
		}
		// Two targets publishing one series mix their counters: each sample then looks like a
		// jump (or a reset) of the other's, and the arbiter reads huge demand from it.
		key := t.Location + "/" + t.Workload + "/" + cmp.Or(t.Replica, u.Host)
		if j, ok := series[key]; ok {
			return &FieldError{at + ".replica", fmt.Sprintf("replica %q of workload %s at %s is also targets[%d]'s; give each target its own replica name",
				cmp.Or(t.Replica, u.Host), t.Workload, t.Location, j)}
		}
		series[key] = i
	}
	return nil
}

// Deps are what the scraper needs from the process around it.
type Deps struct {
	Publisher Publisher
	Logger    *slog.Logger
	Now       func() time.Time // nil: time.Now
	HTTP      *http.Client     // nil: a plain client; every scrape has its own deadline
	Metrics   *Metrics         // nil: none recorded
}

// Scraper scrapes every target on an interval and publishes one tokens.sample per target, a
// round's samples together.
type Scraper struct {
	cfg Config
	d   Deps

	mu   sync.Mutex
	last map[int]Counters // per target: the last published counters
}

// New checks cfg and returns a scraper.
func New(cfg Config, d Deps) (*Scraper, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("scrape config: %w", err)
	}
	if d.Publisher == nil {
		return nil, errors.New("token scraper: no publisher given")
	}
	cfg.Interval = cmpOr(cfg.Interval, 30*time.Second)
	cfg.Timeout = cmpOr(cfg.Timeout, 10*time.Second)
	cfg.Targets = append([]Target(nil), cfg.Targets...)
	for i, t := range cfg.Targets {
		if t.Replica == "" {
			u, _ := url.Parse(t.URL) // checked by Validate
			cfg.Targets[i].Replica = u.Host
		}
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.HTTP == nil {
		d.HTTP = &http.Client{}
	}
	return &Scraper{cfg: cfg, d: d, last: map[int]Counters{}}, nil
}

func cmpOr(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// Run scrapes every target once per interval until ctx is cancelled, all targets of a round at
// once and each within the timeout, so a slow replica never delays the others' scrape, and
// delays the round's publish by at most the timeout. A failed scrape is logged and retried on
// the next round.
func (s *Scraper) Run(ctx context.Context) error {
	s.d.Logger.Info("token scraper started", "targets", len(s.cfg.Targets), "interval", s.cfg.Interval)
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	all := make([]int, len(s.cfg.Targets))
	for i := range all {
		all[i] = i
	}
	for {
		if _, err := s.round(ctx, all); err != nil && ctx.Err() == nil {
			s.d.Logger.Warn("token scrape failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Scrape reads target i once and publishes its sample.
func (s *Scraper) Scrape(ctx context.Context, i int) (*events.TokensSample, error) {
	got, err := s.round(ctx, []int{i})
	if len(got) == 0 {
		return nil, err
	}
	return got[0], err
}

// round scrapes the targets at once and publishes the samples of those that answered in one
// PublishBatch, all stamped with the round's time. The counters become the baseline for reset
// detection only once the samples are published, so a failed publish loses no reset. The error
// joins each failed target's and the publish's.
func (s *Scraper) round(ctx context.Context, targets []int) ([]*events.TokensSample, error) {
	at := s.d.Now().UTC()
	counters, errs := make([]Counters, len(targets)), make([]error, len(targets))
	var wg sync.WaitGroup
	for j, i := range targets {
		wg.Go(func() { counters[j], errs[j] = s.fetch(ctx, s.cfg.Targets[i]) })
	}
	wg.Wait()
	var samples []*events.TokensSample
	var evs []events.Event
	s.mu.Lock()
	for j, i := range targets {
		if errs[j] != nil {
			s.d.Metrics.scraped(s.cfg.Targets[i], "error")
			continue
		}
		t, c := s.cfg.Targets[i], counters[j]
		prev, seen := s.last[i]
		e := &events.TokensSample{Meta: events.Meta{At: at}, Location: t.Location, Workload: t.Workload,
			Replica: t.Replica, Server: string(t.Server), PromptTokens: c.PromptTokens,
			GenerationTokens: c.GenerationTokens, Requests: c.Requests, Reset: seen && wentDown(prev, c)}
		samples, evs = append(samples, e), append(evs, e)
	}
	s.mu.Unlock()
	if len(evs) == 0 {
		return nil, errors.Join(errs...)
	}
	if err := s.d.Publisher.PublishBatch(ctx, evs); err != nil {
		for _, e := range samples {
			s.d.Metrics.scraped(Target{Workload: e.Workload, Replica: e.Replica}, "publish_error")
		}
		return nil, errors.Join(append(errs, fmt.Errorf("publishing the tokens of %d replicas: %w", len(evs), err))...)
	}
	s.remember(targets, counters, errs, samples)
	return samples, errors.Join(errs...)
}

// remember makes the published counters the baseline of their targets, and logs the resets.
func (s *Scraper) remember(targets []int, counters []Counters, errs []error, samples []*events.TokensSample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := 0
	for j, i := range targets {
		if errs[j] != nil {
			continue
		}
		prev := s.last[i]
		s.last[i] = counters[j]
		s.d.Metrics.published(samples[k])
		if e := samples[k]; e.Reset {
			s.d.Logger.Info("token counters reset: the server restarted", "replica", e.Replica, "was", prev, "now", counters[j])
		}
		k++
	}
}

// wentDown reports whether any counter is lower than before: counters only go down when the
// server restarts.
func wentDown(prev, now Counters) bool {
	return now.PromptTokens < prev.PromptTokens || now.GenerationTokens < prev.GenerationTokens ||
		now.Requests < prev.Requests
}

// maxPage bounds a metrics page; vLLM's is tens of kilobytes.
const maxPage = 16 << 20

func (s *Scraper) fetch(ctx context.Context, t Target) (Counters, error) {
	where := redact.URL(t.URL)
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.URL, nil)
	if err != nil {
		return Counters{}, fmt.Errorf("scraping %s: %w", where, err)
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := s.d.HTTP.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its message repeats the URL, credentials included
		}
		return Counters{}, fmt.Errorf("scraping %s: %w", where, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Counters{}, fmt.Errorf("scraping %s: HTTP %d", where, resp.StatusCode)
	}
	c, err := Parse(io.LimitReader(resp.Body, maxPage), t.Server)
	if err != nil {
		return Counters{}, fmt.Errorf("scraping %s: %w", where, err)
	}
	return c, nil
}
