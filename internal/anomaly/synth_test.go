package anomaly

import (
	"math"
	"math/rand/v2"
	"time"
)

var epoch = time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC)

const step = 5 * time.Minute

// synthetic is a small workload for the pure tests: two spot zones and an on-demand pool, with
// a daily cycle (busy afternoons) and a little seeded noise, days long.
func synthetic(days int, seed uint64) *Workload {
	n := days * 288
	rng := rand.New(rand.NewPCG(seed, 1))
	w := &Workload{Name: "w", Start: epoch, Step: step}
	for _, leaf := range []struct {
		loc      string
		od       bool
		usdPerHr float64
	}{{"a", false, 10}, {"b", false, 6}, {"a", true, 4}} {
		l := Leaf{Series: "w/" + leaf.loc + map[bool]string{false: "/spot", true: "/on_demand"}[leaf.od],
			Location: leaf.loc, OnDemand: leaf.od, USDPerHour: make([]float64, n), GPUs: make([]float64, n)}
		for i := range n {
			day := 1 + 0.5*math.Sin(2*math.Pi*float64(i%288)/288)
			l.USDPerHour[i] = leaf.usdPerHr * day * (1 + 0.03*rng.NormFloat64())
			l.GPUs[i] = l.USDPerHour[i] / (leaf.usdPerHr / 4) // a steady price per GPU
		}
		w.Leaves = append(w.Leaves, l)
	}
	return w
}

// scopeAlerts runs Bursar's scope detector over w, as the benchmark does.
func scopeAlerts(w *Workload, cfg Config) []Anomaly {
	sc := NewScope(w.Name, cfg)
	var out []Anomaly
	index := map[string]int{}
	for i := range w.Steps() {
		children := map[string]Child{}
		for _, l := range w.Leaves {
			children[l.Series] = Child{USDPerHour: l.USDPerHour[i], GPUs: l.GPUs[i]}
		}
		for _, e := range sc.Observe(w.Start.Add(time.Duration(i)*w.Step), children) {
			id := e.Anomaly.Series + e.Anomaly.Start.String()
			if k, ok := index[id]; ok {
				out[k] = e.Anomaly
				continue
			}
			index[id] = len(out)
			out = append(out, e.Anomaly)
		}
	}
	return out
}
