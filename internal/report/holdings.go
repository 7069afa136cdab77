package report

import (
	"context"
	"fmt"
	"time"

	"github.com/bursar-dev/bursar/internal/billing"
)

// heldRow is a replica_state interval whose ready replicas named their instances.
type heldRow struct {
	Workload  string   `json:"workload"`
	Location  string   `json:"location"`
	Provider  string   `json:"provider"`
	Instances []string `json:"instances"`
	FromMS    int64    `json:"from_ms"`
	ToMS      int64    `json:"to_ms"`
}

// holdings is which instances each workload's ready replicas ran on during the window: the
// closed intervals' prev_instances, and the latest sample's instances of each series still
// running (its workload, location and market, as openIntervals reads them), up to end. History
// recorded before migration 0006, and actuators that do not name instances, hold none.
func holdings(ctx context.Context, q Querier, w Window, end time.Time) ([]billing.Holding, error) {
	rows, err := queryRows[heldRow](ctx, q, fmt.Sprintf(`SELECT DISTINCT workload, location, provider,
		prev_instances AS instances, toUnixTimestamp64Milli(prev_at) AS from_ms, toUnixTimestamp64Milli(at) AS to_ms
		FROM %s WHERE prev_ready > 0 AND notEmpty(prev_instances) AND at > prev_at AND at > %s AND prev_at < %s`,
		q.Table("replica_state"), ms64(w.Since), ms64(w.Until)))
	if err != nil {
		return nil, fmt.Errorf("reading the instances replicas ran on: %w", err)
	}
	if end.After(w.Since) {
		open, err := queryRows[heldRow](ctx, q, fmt.Sprintf(`SELECT DISTINCT workload, location, provider, instances,
			toUnixTimestamp64Milli(at) AS from_ms, %d AS to_ms
			FROM %s WHERE (workload, location, market, at) IN (
				SELECT workload, location, market, max(at) FROM %s GROUP BY workload, location, market)
			AND ready > 0 AND notEmpty(instances) AND at < %s`,
			end.UnixMilli(), q.Table("replica_state"), q.Table("replica_latest"), ms64(end)))
		if err != nil {
			return nil, fmt.Errorf("reading the instances replicas run on now: %w", err)
		}
		rows = append(rows, open...)
	}
	var out []billing.Holding
	for _, r := range rows {
		from, to := time.UnixMilli(r.FromMS).UTC(), time.UnixMilli(r.ToMS).UTC()
		for _, in := range r.Instances {
			out = append(out, billing.Holding{Workload: r.Workload, Location: r.Location, Provider: r.Provider,
				Instance: in, From: from, To: to})
		}
	}
	return out, nil
}
