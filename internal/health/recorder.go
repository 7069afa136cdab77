package health

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// RecorderGrace is how long the recorder's inserts may fail before the program is not ready: a
// blip (a ClickHouse restart, one slow merge) is retried and passes; a read-only or full data
// dir, or a store that is gone, does not.
const RecorderGrace = 30 * time.Second

// The recorder's gauges the check reads (internal/recorder/metrics.go).
const (
	recorderUp  = "bursar_recorder_clickhouse_up"
	recorderLag = "bursar_recorder_lag_messages"
)

// Recorder holds while the history recorder's inserts succeed, or have failed for less than
// grace: it reads the recorder's bursar_recorder_clickhouse_up gauges from g, which are 0 on a
// stream while its inserts fail and are retried. The failure is timed from the first probe that
// saw it, so it is noticed at most one probe period late. now is the clock.
func Recorder(g prometheus.Gatherer, grace time.Duration, now func() time.Time) Check {
	var mu sync.Mutex
	since := map[string]time.Time{} // stream -> first seen failing
	return Check{Name: "recorder", Run: func(context.Context) error {
		down, lag, err := recorderState(g)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		t := now()
		var bad []string
		for _, s := range down {
			first, ok := since[s]
			if !ok {
				since[s], first = t, t
			}
			if d := t.Sub(first); d >= grace {
				bad = append(bad, fmt.Sprintf("%s (for %v, %v messages not recorded)", s, d.Round(time.Second), lag[s]))
			}
		}
		for s := range since {
			if !slices.Contains(down, s) {
				delete(since, s)
			}
		}
		if len(bad) > 0 {
			return fmt.Errorf("history inserts failing on %s: see the recorder's log for why (a read-only or full data dir, or ClickHouse down)",
				strings.Join(bad, ", "))
		}
		return nil
	}}
}

// recorderState reads which streams' inserts are failing, and every stream's lag.
func recorderState(g prometheus.Gatherer) (down []string, lag map[string]float64, err error) {
	mfs, err := g.Gather()
	if err != nil {
		return nil, nil, fmt.Errorf("reading the recorder's metrics: %w", err)
	}
	lag = map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			stream := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "stream" {
					stream = l.GetValue()
				}
			}
			switch mf.GetName() {
			case recorderUp:
				if m.GetGauge().GetValue() == 0 {
					down = append(down, stream)
				}
			case recorderLag:
				lag[stream] = m.GetGauge().GetValue()
			}
		}
	}
	sort.Strings(down)
	return down, lag, nil
}
