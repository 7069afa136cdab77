package gpu

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/bursar-dev/bursar/internal/events"
	"github.com/bursar-dev/bursar/internal/events/eventstest"
)

// fakeReader returns fixed stats and an optional error.
type fakeReader struct {
	stats  []Stat
	err    error
	reads  atomic.Int64
	closed atomic.Bool
}

func (f *fakeReader) Read(context.Context) ([]Stat, error) { f.reads.Add(1); return f.stats, f.err }
func (f *fakeReader) Close() error                         { f.closed.Store(true); return nil }

// recorder is a Publisher that keeps the samples it was given.
type recorder = eventstest.Publisher[*events.GPUSample]

// countingHandler counts log records at or above Warn.
type countingHandler struct {
	slog.Handler
	warns atomic.Int64
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *countingHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		h.warns.Add(1)
	}
	return nil
}

var h100 = Stat{UUID: "GPU-1", Name: "NVIDIA H100 80GB HBM3", UtilizationPct: 87, MemoryUsed: 60 << 30,
	MemoryTotal: 80 << 30, PowerW: 612.5, TemperatureC: 64}

func TestCollectPublishesOneSamplePerGPU(t *testing.T) {
	at := time.Date(2026, 9, 13, 12, 0, 0, 0, time.UTC)
	second := h100
	second.Index, second.UUID = 1, "GPU-2"
	bad := h100
	bad.Index, bad.UUID, bad.MemoryUsed = 2, "GPU-3", 90<<30 // more used than total: not published
	tests := []struct {
		name        string
		reader      *fakeReader
		wantUUIDs   []string
		wantErr     string
		wantOutcome string // of bursar_gpu_sweeps_total
	}{
		{name: "two gpus", reader: &fakeReader{stats: []Stat{h100, second}}, wantUUIDs: []string{"GPU-1", "GPU-2"}, wantOutcome: "ok"},
		{name: "one gpu failed to read", reader: &fakeReader{stats: []Stat{h100}, err: errors.New("reading gpu 1: GPU is lost")},
			wantUUIDs: []string{"GPU-1"}, wantErr: "GPU is lost", wantOutcome: "partial"},
		{name: "an impossible reading is skipped", reader: &fakeReader{stats: []Stat{h100, bad}},
			wantUUIDs: []string{"GPU-1"}, wantErr: "memory_used_bytes", wantOutcome: "partial"},
		{name: "no gpus", reader: &fakeReader{}, wantOutcome: "failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pub, m := &recorder{}, NewMetrics(prometheus.NewRegistry())
			c, err := New(Config{Location: "aws-use1", Node: "node-1"}, Deps{Publisher: pub, Metrics: m, Now: func() time.Time { return at }})
			if err != nil {
				t.Fatal(err)
			}
			n, err := c.Collect(context.Background(), tt.reader)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Collect() error = %v, want %q", err, tt.wantErr)
			}
			got := pub.Events()
			if n != len(tt.wantUUIDs) || len(got) != len(tt.wantUUIDs) {
				t.Fatalf("published %d (reported %d), want %d", len(got), n, len(tt.wantUUIDs))
			}
			if v := testutil.ToFloat64(m.sweeps.WithLabelValues(tt.wantOutcome)); v != 1 {
				t.Errorf("bursar_gpu_sweeps_total{outcome=%q} = %v, want 1", tt.wantOutcome, v)
			}
			if v := testutil.ToFloat64(m.devices); v != float64(len(tt.wantUUIDs)) {
				t.Errorf("bursar_gpu_devices = %v, want %d", v, len(tt.wantUUIDs))
			}
			for i, s := range got {
				if s.UUID != tt.wantUUIDs[i] || !s.At.Equal(at) || s.Model != "H100-80GB" || s.Node != "node-1" ||
					s.PowerW != 612.5 || s.MemoryTotalBytes != 80<<30 {
					t.Errorf("sample %d = %+v", i, s)
				}
			}
		})
	}
}

func TestRunWithoutDriverSaysSoOnceAndIdles(t *testing.T) {
	h := &countingHandler{Handler: slog.DiscardHandler}
	var opens atomic.Int64
	m := NewMetrics(prometheus.NewRegistry())
	m.available.Set(1) // as if an earlier start had opened it
	c, err := New(Config{Location: "l", Node: "n", Interval: time.Millisecond}, Deps{Publisher: &recorder{}, Metrics: m,
		Logger: slog.New(h), Open: func() (Reader, error) {
			opens.Add(1)
			return nil, errors.New("initializing nvml: " + ErrUnavailable.Error())
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := c.Run(ctx); err != nil {
		t.Fatalf("Run() = %v, want nil: no GPU is not a collector failure", err)
	}
	if opens.Load() != 1 || h.warns.Load() != 1 {
		t.Fatalf("opened %d times and warned %d times, want once each (no retry loop)", opens.Load(), h.warns.Load())
	}
	if v := testutil.ToFloat64(m.available); v != 0 {
		t.Errorf("bursar_gpu_nvml_available = %v without a driver, want 0", v)
	}
}

func TestRunSamplesUntilCancelled(t *testing.T) {
	r := &fakeReader{stats: []Stat{h100}}
	pub := &recorder{}
	c, err := New(Config{Location: "l", Node: "n", Interval: time.Millisecond}, Deps{Publisher: pub,
		Open: func() (Reader, error) { return r, nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	for r.reads.Load() < 3 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !r.closed.Load() || len(pub.Events()) < 3 {
		t.Fatalf("closed=%v after %d samples, want closed after >= 3", r.closed.Load(), len(pub.Events()))
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name      string
		cfg       Config
		wantField string
	}{
		{name: "ok", cfg: Config{Location: "l", Interval: time.Second}},
		{name: "no location", cfg: Config{}, wantField: "location"},
		{name: "negative interval", cfg: Config{Location: "l", Interval: -time.Second}, wantField: "interval"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			var fe *FieldError
			if tt.wantField == "" && err != nil || tt.wantField != "" && (!errors.As(err, &fe) || fe.Field != tt.wantField) {
				t.Fatalf("Validate() = %v, want field %q", err, tt.wantField)
			}
		})
	}
}

func TestModel(t *testing.T) {
	tests := []struct {
		name   string
		board  string
		memory uint64
		want   string
	}{
		{name: "h100 sxm", board: "NVIDIA H100 80GB HBM3", memory: 81559 << 20, want: "H100-80GB"},
		{name: "a100 40", board: "NVIDIA A100-SXM4-40GB", memory: 40960 << 20, want: "A100-40GB"},
		{name: "a100 80 pcie", board: "NVIDIA A100 80GB PCIe", memory: 81920 << 20, want: "A100-80GB"},
		{name: "h200 by memory", board: "NVIDIA H200", memory: 143771 << 20, want: "H200-141GB"},
		{name: "h100 nvl by memory", board: "NVIDIA H100 NVL", memory: 95830 << 20, want: "H100-94GB"},
		{name: "l40s", board: "NVIDIA L40S", memory: 46068 << 20, want: "L40S"},
		{name: "tesla t4", board: "Tesla T4", memory: 15360 << 20, want: "T4"},
		{name: "geforce", board: "NVIDIA GeForce RTX 4090", memory: 24564 << 20, want: "RTX4090"},
		{name: "unknown keeps nvml's name", board: "NVIDIA Future X9", memory: 1 << 30, want: "NVIDIA Future X9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Model(tt.board, tt.memory); got != tt.want {
				t.Errorf("Model(%q) = %q, want %q", tt.board, got, tt.want)
			}
		})
	}
}

func TestCollectReportsAFailedPublishOfTheSweep(t *testing.T) {
	pub := &recorder{}
	pub.SetFail(errors.New("nats: timeout"))
	c, err := New(Config{Location: "aws-use1", Node: "node-1"}, Deps{Publisher: pub})
	if err != nil {
		t.Fatal(err)
	}
	second := h100
	second.Index, second.UUID = 1, "GPU-2"
	n, err := c.Collect(context.Background(), &fakeReader{stats: []Stat{h100, second}})
	if n != 0 || err == nil || !strings.Contains(err.Error(), "publishing the samples of 2 gpus: nats: timeout") {
		t.Fatalf("Collect() = %d, %v; want nothing published and the publish error", n, err)
	}
}
