package report

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/robfig/cron/v3"
)

// Poster sends a finished report somewhere people read it: text, and the chart PNG when there is
// one.
type Poster interface {
	Post(ctx context.Context, title, text string, chart []byte) error
}

// Runner runs one named report at a time.
type Runner func(ctx context.Context, name string, now time.Time) (*Result, error)

// Scheduler runs named reports on a cron schedule and posts them.
type Scheduler struct {
	Schedule string   // five-field cron, UTC, e.g. "0 9 * * MON"
	Reports  []string // names, run in order
	Run      Runner
	// Poster receives each report; nil prints them to Out instead (a dry run).
	Poster Poster
	Out    io.Writer
	Log    *slog.Logger
	// Metrics counts the runs; nil counts nothing.
	Metrics *ServeMetrics
}

// ServeMetrics are report serve's Prometheus series: each scheduled report's runs by outcome,
// the time of its last posted run and how long runs take, so a report that stopped reaching
// Slack (or its history) shows before anyone misses Monday's post.
type ServeMetrics struct {
	runs        *prometheus.CounterVec
	lastSuccess *prometheus.GaugeVec
	duration    *prometheus.HistogramVec
}

// NewServeMetrics registers the series with reg.
func NewServeMetrics(reg prometheus.Registerer) *ServeMetrics {
	m := &ServeMetrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bursar_report_runs_total",
			Help: "Scheduled report runs, by report and outcome (ok, failed)."}, []string{"report", "outcome"}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "bursar_report_last_success_timestamp_seconds",
			Help: "Unix time of the run a report was last posted (or printed) for."}, []string{"report"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "bursar_report_run_duration_seconds",
			Help: "Time to run and post one report.", Buckets: prometheus.ExponentialBuckets(.05, 2, 12)}, []string{"report"}),
	}
	reg.MustRegister(m.runs, m.lastSuccess, m.duration)
	return m
}

// observe records one run of report name for the time now that ended with err after took.
func (m *ServeMetrics) observe(name string, now time.Time, took time.Duration, err error) {
	if m == nil {
		return
	}
	m.duration.WithLabelValues(name).Observe(took.Seconds())
	if err != nil {
		m.runs.WithLabelValues(name, "failed").Inc()
		return
	}
	m.runs.WithLabelValues(name, "ok").Inc()
	m.lastSuccess.WithLabelValues(name).Set(float64(now.UnixNano()) / 1e9)
}

// Parse checks the schedule and returns its next time after now.
func (s *Scheduler) Parse(now time.Time) (time.Time, error) {
	sched, err := cron.ParseStandard(s.Schedule)
	if err != nil {
		return time.Time{}, fmt.Errorf("--schedule %q: %w (want five cron fields, e.g. \"0 9 * * MON\")", s.Schedule, err)
	}
	return sched.Next(now.UTC()), nil
}

// Once runs every report for now and posts (or prints) each. A report that fails is logged and
// the others still run; the error names every one that failed.
func (s *Scheduler) Once(ctx context.Context, now time.Time) error {
	var failed []string
	for _, name := range s.Reports {
		start := time.Now()
		err := s.one(ctx, name, now)
		s.Metrics.observe(name, now, time.Since(start), err)
		if err != nil {
			s.Log.Error("scheduled report failed", "report", name, "err", err)
			failed = append(failed, name+": "+err.Error())
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("scheduled reports failed: %s", strings.Join(failed, "; "))
	}
	return nil
}

func (s *Scheduler) one(ctx context.Context, name string, now time.Time) error {
	res, err := s.Run(ctx, name, now)
	if err != nil {
		return err
	}
	var chart []byte
	if res.Series != nil && len(res.Series.Lines) > 0 {
		if chart, err = res.Series.PNG(res.Title); err != nil {
			return err
		}
	}
	var b bytes.Buffer
	if err := Write(&b, "markdown", res, ""); err != nil {
		return err
	}
	if s.Poster == nil {
		fmt.Fprintf(s.Out, "%s", b.String())
		if chart != nil {
			fmt.Fprintf(s.Out, "\n(chart: %d-byte PNG would be attached)\n", len(chart))
		}
		fmt.Fprintln(s.Out)
		return nil
	}
	if err := s.Poster.Post(ctx, res.Title, b.String(), chart); err != nil {
		return err
	}
	s.Log.Info("posted report", "report", name, "title", res.Title)
	return nil
}

// Start runs the reports on the schedule until ctx ends. now is the clock (time.Now in
// production).
func (s *Scheduler) Start(ctx context.Context, now func() time.Time) error {
	next, err := s.Parse(now())
	if err != nil {
		return err
	}
	c := cron.New(cron.WithLocation(time.UTC))
	if _, err := c.AddFunc(s.Schedule, func() { _ = s.Once(ctx, now()) }); err != nil {
		return fmt.Errorf("--schedule %q: %w", s.Schedule, err)
	}
	s.Log.Info("reports scheduled", "schedule", s.Schedule, "reports", strings.Join(s.Reports, ","), "next", next)
	c.Start()
	<-ctx.Done()
	<-c.Stop().Done()
	return nil
}

// Named are the reports a schedule can run.
var Named = []string{"cost", "tokens", "savings", "idle", "reclaims", "availability", "commitments", "jobs", "anomalies"}

// RunNamed runs one of Named with default settings.
func RunNamed(ctx context.Context, q Querier, name string, o Options) (*Result, error) {
	switch name {
	case "cost":
		return Cost(ctx, q, o)
	case "tokens":
		return Tokens(ctx, q, TokenOptions{Options: o})
	case "savings":
		return Savings(ctx, q, o)
	case "idle":
		return Idle(ctx, q, IdleOptions{Options: o})
	case "reclaims":
		return Reclaims(ctx, q, o)
	case "availability":
		return Availability(ctx, q, AvailabilityOptions{Options: o})
	case "commitments":
		return Commitments(ctx, q, CommitOptions{Options: o})
	case "jobs":
		return Jobs(ctx, q, JobOptions{Options: o})
	case "anomalies":
		return Anomalies(ctx, q, o)
	}
	return nil, fmt.Errorf("no report named %q: want one of %s", name, strings.Join(Named, ", "))
}
