package demo

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bursar-dev/bursar/internal/fleet"
	"github.com/bursar-dev/bursar/internal/pricing"
	"github.com/bursar-dev/bursar/internal/serving"
)

// The traffic model. Each workload's demand follows its file under load/, scaled so that its
// peak is peakReplicas times its minimum replicas' worth of a mean replica: the mean of what one
// replica serves on each GPU model it accepts. A ready replica serves up to headroom times its
// rate, so a fleet short of capacity serves less than demand and the rate it reports shows it.
const (
	peakReplicas = 1.5
	headroom     = 1.25
)

// traffic is one workload's demand, minute by minute, scaled to the demo fleet.
type traffic struct {
	metric  string
	minutes []serving.Minute // scaled: what arrives in each minute of the replay
}

// loadTraffic reads load/<workload>.csv for each workload of cfg and scales it.
func loadTraffic(dir string, cfg *fleet.Config) (map[string]traffic, error) {
	out := map[string]traffic{}
	for i := range cfg.Workloads {
		w := &cfg.Workloads[i]
		name := filepath.Join("load", w.Name+".csv")
		if !w.SizedByThroughput() {
			return nil, fmt.Errorf("%s/bursar.yaml: workload %s scales on %s; the demo drives workloads sized by %s, %s or %s, from %s",
				dir, w.Name, w.Scaling.Metric, fleet.MetricTokens, fleet.MetricOutputTokens, fleet.MetricRequests, name)
		}
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("reading workload %s's demand: %w", w.Name, err)
		}
		d, err := serving.ParseDemand(name, f)
		f.Close()
		if err != nil {
			return nil, err
		}
		if out[w.Name], err = newTraffic(w, d.Minutes, name); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// newTraffic scales minutes so that their peak, in w's scaling metric, is peakReplicas times w's
// minimum replicas' worth of a mean replica.
func newTraffic(w *fleet.Workload, minutes []serving.Minute, name string) (traffic, error) {
	t := traffic{metric: w.Scaling.Metric}
	peak := 0.0
	for _, m := range minutes {
		peak = max(peak, t.rate(m))
	}
	rates := w.Rates()
	if !(peak > 0) || math.IsInf(peak, 1) || len(rates) == 0 {
		return t, fmt.Errorf("%s: no demand in %s, or no rate per replica for workload %s to scale it to",
			name, w.Scaling.Metric, w.Name)
	}
	mean := 0.0
	for _, r := range rates {
		mean += r / float64(len(rates))
	}
	k := peakReplicas * float64(w.Replicas.Min) * mean / peak
	t.minutes = make([]serving.Minute, len(minutes))
	for i, m := range minutes {
		t.minutes[i] = serving.Minute{Requests: m.Requests * k, Input: m.Input * k, Output: m.Output * k}
	}
	return t, nil
}

// rate is minute m's demand per second in the workload's scaling metric.
func (t traffic) rate(m serving.Minute) float64 {
	switch t.metric {
	case fleet.MetricRequests:
		return m.Requests / 60
	case fleet.MetricOutputTokens:
		return m.Output / 60
	}
	return m.Tokens() / 60
}

// at is the demand of tick i; the last minute holds past the end.
func (t traffic) at(i int) serving.Minute {
	return t.minutes[min(i, len(t.minutes)-1)]
}

// gpuModels maps each instance type of the catalog to its GPU model, for the offers the
// arbiter names by location/zone/instance type/market.
func gpuModels(c pricing.Catalog) map[string]string {
	out := map[string]string{}
	for _, o := range c.Offers {
		if o.GPU != "" {
			out[o.InstanceType] = o.GPU
		}
	}
	return out
}

// offerGPU is the GPU model of an offer id, "" when the catalog does not say.
func offerGPU(models map[string]string, offer string) string {
	parts := strings.Split(offer, "/")
	if len(parts) < 4 {
		return ""
	}
	return models[parts[2]]
}

// shortest is the fewest minutes any workload's demand covers.
func shortest(ts map[string]traffic) int {
	var n []int
	for _, t := range ts {
		n = append(n, len(t.minutes))
	}
	if len(n) == 0 {
		return 0
	}
	return slices.Min(n)
}
