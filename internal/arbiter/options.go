package arbiter

import (
	"errors"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/placement"
)

// Options configure a Service. Zero fields take the defaults documented on them.
type Options struct {
	Config   *fleet.Config
	JS       jetstream.JetStream
	Actuator actuate.Actuator // usually an actuate.Router; a Reporter too, to publish replica.state
	Log      *slog.Logger
	Registry prometheus.Registerer // nil: metrics are kept but not registered
	Clock    Clock                 // default: the wall clock
	Gate     Gate                  // default: NoGate
	Caps     Caps                  // default: NoCaps
	Policy   placement.Policy
	Books    BookStore // default: the placement bucket (KVBooks)
	// OnCorrupt, when set, is told of each value in the arbiter's buckets that does not decode
	// (besides the error log and bursar_arbiter_corrupt_values_total); the system posts it to
	// Slack. It must not block.
	OnCorrupt func(Corruption)

	// Identity names this arbiter in the lease (default hostname-pid). An arbiter restarted under
	// the same identity takes its own unexpired lease back at once.
	Identity  string
	Partition string        // lease key; default "arbiter"
	LeaseTTL  time.Duration // must match the leases bucket's TTL (bus.Options.LeaseTTL); default 10s

	Debounce          time.Duration // wait after a price or demand change before planning (default 1s)
	Interval          time.Duration // plan at least this often (default 30s)
	ReportEvery       time.Duration // poll the actuator and publish replica.state (default 15s)
	Workers           int           // actuator calls in parallel per location, one workload at a time each (default 4)
	MarketLookback    time.Duration // prices replayed at start (default 7h: one collector snapshot)
	TelemetryLookback time.Duration // samples replayed at start (default 10m)
	// DemandLookback is how far back token samples are replayed at start, to rebuild each serving
	// workload's demand history and forecast (demand.go): default 24h, the forecaster's season and
	// the telemetry stream's default retention.
	DemandLookback time.Duration
}

func (o *Options) defaults() error {
	if o.Config == nil || o.JS == nil || o.Actuator == nil {
		return errors.New("arbiter needs a fleet config, JetStream and an actuator")
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Clock == nil {
		o.Clock = WallClock{}
	}
	if o.Gate == nil {
		o.Gate = NoGate{}
	}
	if o.Caps == nil {
		o.Caps = NoCaps{}
	}
	if o.Identity == "" {
		host, _ := os.Hostname()
		o.Identity = host + "-" + strconv.Itoa(os.Getpid())
	}
	if err := checkIdentity(o.Identity); err != nil {
		return err
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if o.Partition == "" {
		o.Partition = "arbiter"
	}
	def(&o.LeaseTTL, 10*time.Second)
	def(&o.Debounce, time.Second)
	def(&o.Interval, 30*time.Second)
	def(&o.ReportEvery, 15*time.Second)
	def(&o.MarketLookback, 7*time.Hour)
	def(&o.TelemetryLookback, 10*time.Minute)
	def(&o.DemandLookback, demandSeason)
	if o.Workers <= 0 {
		o.Workers = 4
	}
	return nil
}
