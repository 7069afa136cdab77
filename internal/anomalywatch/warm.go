package anomalywatch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/bursar-dev/bursar/internal/arbiter"
)

// History is the recorded history a watcher warms its detectors from; *store.Store is one.
type History interface {
	// Query runs a SELECT and returns its rows as JSONEachRow.
	Query(ctx context.Context, query string) ([]byte, error)
	// Table returns the quoted name to read a table by.
	Table(name string) string
}

// warmStale is how long a group's last replica.state counts when no newer one was recorded: the
// arbiter reports every group every 15 s, so a group silent for longer has gone.
const warmStale = 15 * time.Minute

// ReplicaStep is a group's last replica.state in one step.
type ReplicaStep struct {
	Step     int64   `json:"step"` // the step's start, Unix seconds
	Workload string  `json:"workload"`
	Location string  `json:"location"`
	Market   string  `json:"market"`
	Offer    string  `json:"offer"`
	Provider string  `json:"provider"`
	GPU      string  `json:"gpu"`
	Ready    float64 `json:"ready"`
	USD      float64 `json:"usd"`
	GPUs     float64 `json:"gpus"` // per replica
}

// Warm feeds the detectors the spend recorded over the d before now (replica_state, at the
// detector's step), as a restarted watcher would have seen it live, so that it alerts at once
// instead of after learning again. What the history raises is not published: the arbiter that
// led then did. It must run before the first Tick.
func (w *Watcher) Warm(ctx context.Context, h History, d time.Duration) error {
	w.tmu.Lock()
	defer w.tmu.Unlock()
	step := w.o.Detector.Step
	end := w.o.Clock.Now().Truncate(step)
	from := end.Add(-d).Truncate(step)
	rows, err := ReplicaSteps(ctx, h, step, from.Add(-warmStale), end)
	if err != nil {
		return fmt.Errorf("warming the anomaly detectors: %w", err)
	}
	policies := w.policies()
	last := map[[4]string]ReplicaStep{} // a group is an offer: one workload may run two at one location and market
	i := 0
	for e := from.Add(step); e.Before(end); e = e.Add(step) {
		for ; i < len(rows) && rows[i].Step < e.Unix(); i++ {
			r := rows[i]
			last[[4]string{r.Workload, r.Location, r.Market, r.Offer}] = r
		}
		w.observe(Sample(w.o.Config, policies, w.burns(last, e)), e)
	}
	w.next = end
	w.o.Log.Info("anomaly detectors warmed from the history", "from", from, "to", end, "steps", int(end.Sub(from)/step)-1, "rows", len(rows))
	return nil
}

// burns is what the groups' last states say ran at the end of a step, those not stale.
func (w *Watcher) burns(last map[[4]string]ReplicaStep, end time.Time) []arbiter.Burn {
	out := make([]arbiter.Burn, 0, len(last))
	for _, r := range last {
		if end.Sub(time.Unix(r.Step, 0)) > warmStale {
			continue
		}
		b := arbiter.Burn{Workload: r.Workload, Provider: r.Provider, Location: r.Location, Market: r.Market,
			GPUModel: r.GPU, Ready: int(r.Ready), GPUs: r.GPUs * r.Ready, USDPerHour: r.USD * r.Ready}
		if wl, ok := w.o.Config.Workload(r.Workload); ok {
			b.Team = wl.Team
		}
		out = append(out, b)
	}
	return out
}

// ReplicaSteps reads each group's last replica.state per step in [from, to), in step order, then
// by workload, location, market and offer (a group is what events.ReplicaState identifies). The watcher warms from it; internal/costseries reads the
// benchmark's recorded replays back with it, so both read the history the same way.
func ReplicaSteps(ctx context.Context, h History, step time.Duration, from, to time.Time) ([]ReplicaStep, error) {
	q := fmt.Sprintf(`SELECT toUInt32(toUnixTimestamp(toStartOfInterval(at, INTERVAL %d SECOND))) AS step,
		workload, location, market, offer, argMax(provider, at) AS provider, argMax(gpu_model, at) AS gpu,
		toFloat64(argMax(ready, at)) AS ready, argMax(usd_per_hour, at) AS usd, toFloat64(argMax(gpus_per_replica, at)) AS gpus
		FROM (SELECT * FROM %s WHERE at >= fromUnixTimestamp64Milli(toInt64(%d), 'UTC') AND at < fromUnixTimestamp64Milli(toInt64(%d), 'UTC')
			ORDER BY id LIMIT 1 BY id)
		GROUP BY step, workload, location, market, offer ORDER BY step, workload, location, market, offer`,
		int(step.Seconds()), h.Table("replica_state"), from.UnixMilli(), to.UnixMilli())
	out, err := h.Query(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("reading replica_state: %w", err)
	}
	var rows []ReplicaStep
	for line := range bytes.SplitSeq(bytes.TrimSpace(out), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r ReplicaStep
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("reading replica_state: %w", err)
		}
		rows = append(rows, r)
	}
	return rows, nil
}
