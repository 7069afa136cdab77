package bus

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
)

// DefaultFillAlert is the share of a stream's byte limit at which the arbiter alerts: at the
// limit an event stream drops its oldest messages (recorded or not) and a bucket refuses writes.
const DefaultFillAlert = 0.8

// Fill is how much one stream or bucket stream holds against its byte limit.
type Fill struct {
	Stream   string
	Bytes    uint64
	MaxBytes int64 // <= 0: no limit
}

// Ratio is Bytes over MaxBytes, 0 for a stream without a limit.
func (f Fill) Ratio() float64 {
	if f.MaxBytes <= 0 {
		return 0
	}
	return float64(f.Bytes) / float64(f.MaxBytes)
}

// Fills reads the fill of every stream and bucket Ensure makes, by name.
func Fills(ctx context.Context, js jetstream.JetStream) ([]Fill, error) {
	var out []Fill
	for _, name := range streamNames() {
		st, err := js.Stream(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("reading the fill of stream %s: %w", name, err)
		}
		info := st.CachedInfo()
		out = append(out, Fill{Stream: name, Bytes: info.State.Bytes, MaxBytes: info.Config.MaxBytes})
	}
	return out, nil
}

// streamNames are the streams Ensure makes, the buckets' among them.
func streamNames() []string {
	var names []string
	for _, s := range Streams(Options{}) {
		names = append(names, s.Name)
	}
	for _, b := range Buckets(Options{}) {
		names = append(names, kvStream(b.Bucket))
	}
	return names
}

// FillCollector exports each stream's bytes, byte limit and fill ratio as metrics, read from
// JetStream at each scrape (bursar_stream_bytes, bursar_stream_max_bytes,
// bursar_stream_fill_ratio); a scrape that cannot read them exports none.
type FillCollector struct {
	js                jetstream.JetStream
	bytes, max, ratio *prometheus.Desc
}

// NewFillCollector returns a collector reading js.
func NewFillCollector(js jetstream.JetStream) *FillCollector {
	l := []string{"stream"}
	return &FillCollector{js: js,
		bytes: prometheus.NewDesc("bursar_stream_bytes", "Bytes a stream or bucket stream holds.", l, nil),
		max:   prometheus.NewDesc("bursar_stream_max_bytes", "A stream's byte limit (Options, docs/security.md).", l, nil),
		ratio: prometheus.NewDesc("bursar_stream_fill_ratio", "Bytes over the byte limit; alerted at "+
			strings.TrimRight(fmt.Sprintf("%.2f", DefaultFillAlert), "0")+" by default.", l, nil)}
}

func (c *FillCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.bytes, c.max, c.ratio} {
		ch <- d
	}
}

func (c *FillCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	fills, err := Fills(ctx, c.js)
	if err != nil {
		return
	}
	for _, f := range fills {
		ch <- prometheus.MustNewConstMetric(c.bytes, prometheus.GaugeValue, float64(f.Bytes), f.Stream)
		ch <- prometheus.MustNewConstMetric(c.max, prometheus.GaugeValue, float64(f.MaxBytes), f.Stream)
		ch <- prometheus.MustNewConstMetric(c.ratio, prometheus.GaugeValue, f.Ratio(), f.Stream)
	}
}
