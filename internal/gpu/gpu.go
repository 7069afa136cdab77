// Package gpu samples each GPU's utilization, memory, power and temperature through NVML and
// publishes them as gpu.sample events, so the arbiter knows how busy the capacity it pays for is.
//
// The cgo-bound NVML adapter is small and sits behind Reader; everything else here is plain Go
// and tested with a fake Reader. On a machine without the NVIDIA driver (or built without cgo)
// the collector says so once and idles, so the other sources of the collector keep running.
package gpu

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
)

// ErrUnavailable means NVML cannot be used here: no driver, no library, or a build without cgo.
var ErrUnavailable = errors.New("nvml unavailable")

// BuildHint says how to build a collector that reads GPUs, for errors and warnings.
const BuildHint = `build the collector with NVML: CGO_ENABLED=1 go build -tags nvml ./cmd/collector (or make build)`

// Publisher sends a node's sweep to the bus as one batch. The JetStream publisher in
// internal/bus satisfies it.
type Publisher interface {
	PublishBatch(ctx context.Context, evs []events.Event) error
}

// Stat is one GPU's reading. A metric the GPU does not support (power on some boards,
// utilization under MIG) reads as zero.
type Stat struct {
	Index          int     `json:"index"`
	UUID           string  `json:"uuid"`
	Name           string  `json:"name"` // as NVML reports it, e.g. "NVIDIA H100 80GB HBM3"
	UtilizationPct float64 `json:"utilization_pct"`
	MemoryUsed     uint64  `json:"memory_used_bytes"`
	MemoryTotal    uint64  `json:"memory_total_bytes"`
	PowerW         float64 `json:"power_w"`
	TemperatureC   float64 `json:"temperature_c"`
}

// Reader reads every GPU once. A GPU that fails to read is left out and its error joined to the
// returned one, so one sick GPU does not hide the others.
type Reader interface {
	Read(ctx context.Context) ([]Stat, error)
	Close() error
}

// Config is the `gpu:` section of collector.yaml.
type Config struct {
	Location string        `yaml:"location"`
	Node     string        `yaml:"node,omitempty"`     // default: the host name
	Interval time.Duration `yaml:"interval,omitempty"` // default 15s
}

// FieldError is a bad config value; Field is its path under `gpu:`.
type FieldError struct {
	Field   string
	Problem string
}

func (e *FieldError) Error() string { return fmt.Sprintf("field %s: %s", e.Field, e.Problem) }

// Validate returns the first bad field.
func (c Config) Validate() error {
	if c.Location == "" {
		return &FieldError{"location", "must name the Bursar location of this node, e.g. aws-use1"}
	}
	if c.Interval < 0 {
		return &FieldError{"interval", fmt.Sprintf("must not be negative, got %s", c.Interval)}
	}
	return nil
}

// Deps are what the collector needs from the process around it.
type Deps struct {
	Publisher Publisher
	Logger    *slog.Logger
	Now       func() time.Time // nil: time.Now
	// Open opens the GPU reader; nil means NVML (OpenNVML). Tests pass a fake or a mock-backed one.
	Open func() (Reader, error)
	// Metrics records NVML's state and the sweeps; nil records nothing.
	Metrics *Metrics
}

// Collector samples the GPUs every interval and publishes one gpu.sample per GPU, the node's
// samples of one sweep together in one batch message.
type Collector struct {
	cfg Config
	d   Deps

	once sync.Once
}

// New checks cfg and returns a collector; it opens nothing until Run.
func New(cfg Config, d Deps) (*Collector, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("gpu config: %w", err)
	}
	if d.Publisher == nil {
		return nil, errors.New("gpu collector: no publisher given")
	}
	if cfg.Node == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("gpu collector: no node name configured and the host name is unknown: %w", err)
		}
		cfg.Node = h
	}
	cfg.Interval = max(cfg.Interval, 0)
	if cfg.Interval == 0 {
		cfg.Interval = 15 * time.Second
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Open == nil {
		d.Open = OpenNVML
	}
	return &Collector{cfg: cfg, d: d}, nil
}

// Run opens the reader and samples until ctx is cancelled. When the GPUs cannot be read at all
// it logs that once and waits for ctx, returning nil: GPU telemetry is one source among several
// and its absence must not stop the collector, nor make it retry in a loop.
func (c *Collector) Run(ctx context.Context) error {
	r, err := c.d.Open()
	c.d.Metrics.opened(err == nil)
	if err != nil {
		c.once.Do(func() {
			c.d.Logger.Warn("gpu telemetry off: cannot open NVML on this machine", "err", err,
				"no_driver", errors.Is(err, ErrUnavailable))
		})
		<-ctx.Done()
		return nil
	}
	defer r.Close()
	c.d.Logger.Info("gpu telemetry started", "interval", c.cfg.Interval, "node", c.cfg.Node)
	t := time.NewTicker(c.cfg.Interval)
	defer t.Stop()
	for {
		if _, err := c.Collect(ctx, r); err != nil && ctx.Err() == nil {
			c.d.Logger.Warn("gpu sample incomplete", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Collect reads every GPU once and publishes what it read as one batch (a batch message on the
// node's subject, see events.DecodeAll), all stamped with one sample time. A sample that is
// invalid is left out and its error returned with the others. It returns how many samples it
// published. Each sweep counts in the metrics.
func (c *Collector) Collect(ctx context.Context, r Reader) (int, error) {
	n, err := c.collect(ctx, r)
	c.d.Metrics.sweep(n, err)
	return n, err
}

func (c *Collector) collect(ctx context.Context, r Reader) (int, error) {
	at := c.d.Now().UTC()
	stats, readErr := r.Read(ctx)
	errs := []error{readErr}
	sweep := make([]events.Event, 0, len(stats))
	for _, s := range stats {
		e := c.sample(s, at)
		if err := events.Validate(events.Stamp(e)); err != nil {
			errs = append(errs, fmt.Errorf("gpu %d (%s): %w", s.Index, s.UUID, err))
			continue
		}
		sweep = append(sweep, e)
	}
	if len(sweep) == 0 {
		return 0, errors.Join(errs...)
	}
	if err := c.d.Publisher.PublishBatch(ctx, sweep); err != nil {
		return 0, errors.Join(append(errs, fmt.Errorf("publishing the samples of %d gpus: %w", len(sweep), err))...)
	}
	return len(sweep), errors.Join(errs...)
}

func (c *Collector) sample(s Stat, at time.Time) *events.GPUSample {
	return &events.GPUSample{Meta: events.Meta{At: at}, Location: c.cfg.Location, Node: c.cfg.Node,
		UUID: s.UUID, Index: s.Index, Model: Model(s.Name, s.MemoryTotal), UtilizationPct: s.UtilizationPct,
		MemoryUsedBytes: int64(min(s.MemoryUsed, 1<<62)), MemoryTotalBytes: int64(min(s.MemoryTotal, 1<<62)),
		PowerW: s.PowerW, TemperatureC: s.TemperatureC}
}
