package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/bursar-dev/bursar/internal/report"
)

// The report package has no availability report yet; these read it from the same history
// (replica_state), through the same Querier.

// readyShare is, per workload and location, the share of the replicas asked for that were
// ready, over the replica.state samples of the window.
type readyShare struct {
	Workload string  `json:"workload"`
	Location string  `json:"location"`
	Ready    float64 `json:"ready"`
	Desired  float64 `json:"desired"`
}

func readyShares(ctx context.Context, q report.Querier, since, until time.Time) ([]readyShare, error) {
	return rows[readyShare](ctx, q, fmt.Sprintf(`SELECT workload, location, toFloat64(sum(ready)) AS ready,
		toFloat64(sum(desired)) AS desired FROM %s FINAL WHERE at >= %s AND at < %s
		GROUP BY workload, location ORDER BY workload, location`, q.Table("replica_state"), ms(since), ms(until)))
}

// readySample is a workload's ready replicas at one replica.state instant (the arbiter reports
// every group at once, under one time).
type readySample struct {
	Workload string `json:"workload"`
	AtMS     int64  `json:"at_ms"`
	Ready    int64  `json:"ready"`
}

func readySamples(ctx context.Context, q report.Querier, since, until time.Time) ([]readySample, error) {
	return rows[readySample](ctx, q, fmt.Sprintf(`SELECT workload, toUnixTimestamp64Milli(at) AS at_ms,
		toInt64(sum(ready)) AS ready FROM %s FINAL WHERE at >= %s AND at < %s
		GROUP BY workload, at ORDER BY workload, at`, q.Table("replica_state"), ms(since), ms(until)))
}

func ms(t time.Time) string {
	return "fromUnixTimestamp64Milli(toInt64(" + strconv.FormatInt(t.UnixMilli(), 10) + "), 'UTC')"
}

func rows[T any](ctx context.Context, q report.Querier, query string) ([]T, error) {
	out, err := q.Query(ctx, query)
	if err != nil {
		return nil, err
	}
	var res []T
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(line, &v); err != nil {
			return nil, fmt.Errorf("decoding a history row %.200q: %w", line, err)
		}
		res = append(res, v)
	}
	return res, nil
}
