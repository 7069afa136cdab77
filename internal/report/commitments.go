package report

import (
	"context"
	"math"
	"sort"
	"time"

	"github.com/bursar-dev/bursar/internal/cli"
)

// CommitOptions says how to size and price a commitment.
type CommitOptions struct {
	Options
	// Percentile of hourly GPUs in use taken as the steady floor (default 10).
	Percentile float64
	// Discount a reservation gets off the on-demand list price, 0..1 (default 0.3).
	Discount float64
}

// Commitments is `report commitments`: per GPU model, the steady floor of GPUs in use over the
// window (a low percentile of the hourly average, hours with nothing running counted as zero),
// and what reserving that floor, whole GPUs only, at Discount off the cheapest on-demand list price
// would have saved against what the GPU-hours it covers cost. A negative saving says the
// capacity was bought cheaper than a reservation (spot, or reservations already held).
func Commitments(ctx context.Context, q Querier, o CommitOptions) (*Result, error) {
	if o.Percentile <= 0 {
		o.Percentile = 10
	}
	if o.Discount <= 0 {
		o.Discount = 0.3
	}
	us, err := loadUsageOf(ctx, q, o.Options, time.Hour, usageCols(o.Options, GPU))
	if err != nil {
		return nil, err
	}
	ps, err := onDemandPrices(ctx, q, o.Window.Until)
	if err != nil {
		return nil, err
	}
	start := hourFloor(o.Window.Since)
	n := int(hourCeil(o.Window.Until).Sub(start) / time.Hour)
	hourly := map[string][]float64{}
	paid := map[string][2]float64{}
	for _, u := range us {
		if hourly[u.GPU] == nil {
			hourly[u.GPU] = make([]float64, n)
		}
		if i := int(u.Hour.Sub(start) / time.Hour); i >= 0 && i < n {
			hourly[u.GPU][i] += u.GPUHours
		}
		p := paid[u.GPU]
		paid[u.GPU] = [2]float64{p[0] + u.USD, p[1] + u.GPUHours}
	}
	res := &Result{Title: "Commitment floors, " + o.Window.String(),
		Columns: []string{"gpu", "hours", "avg_gpus", "floor_gpus", "paid_usd_per_gpu_hour", "on_demand_usd_per_gpu_hour",
			"reserved_usd_per_gpu_hour", "covered_gpu_hours", "saving_usd"}}
	for _, gpu := range sortedKeys(hourly) {
		hs := hourly[gpu]
		floor := math.Floor(percentile(hs, o.Percentile) + 1e-9)
		paidPer := ratio(paid[gpu][0], paid[gpu][1])
		od := math.NaN()
		for _, p := range ps {
			if p.GPU == gpu && (math.IsNaN(od) || p.PerGPU < od) {
				od = p.PerGPU
			}
		}
		if math.IsNaN(od) {
			od = paidPer
			res.Notes = append(res.Notes, "no on-demand list price for "+gpu+": the price paid stands in")
		}
		reserved := od * (1 - o.Discount)
		var covered float64
		for _, h := range hs {
			covered += math.Min(h, floor)
		}
		res.Rows = append(res.Rows, cli.Row{"gpu": gpu, "hours": n, "avg_gpus": round(paid[gpu][1]/float64(n), 3),
			"floor_gpus": floor, "paid_usd_per_gpu_hour": round(paidPer, 4), "on_demand_usd_per_gpu_hour": round(od, 4),
			"reserved_usd_per_gpu_hour": round(reserved, 4), "covered_gpu_hours": round(covered, 3),
			"saving_usd": round(covered*paidPer-floor*float64(n)*reserved, 2)})
	}
	return res, nil
}

// percentile is the nearest-rank p-th percentile of xs.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}
