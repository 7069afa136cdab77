package costseries

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bursar-dev/bursar/internal/serving"
)

// ErrNoData is returned when the shared data folder is absent; tests and benchmarks skip on it.
var ErrNoData = errors.New("the shared traces are absent")

// DefaultData is where the shared data lies relative to the repository root.
const DefaultData = serving.DefaultData

// Options say which replays make the series. An empty list replays nothing of its kind: start
// from DefaultOptions.
type Options struct {
	// Data is ../shared/data (relative to the working directory or absolute).
	Data string
	// ReplicaTraces are folders under Data/traces/skyserve replayed by `arbiter replay`.
	ReplicaTraces []string
	// ReplicaPolicies are the replica replay's policies, each its own workload.
	ReplicaPolicies []string
	// ServingPolicies are the serving replay's policies, each replayed on every ServeGen trace.
	ServingPolicies []string
}

// DefaultOptions are the benchmark's replays: AWS1 and AWS2 under SpotHedge, Bursar's planner,
// Round Robin and Even Spread with a spare (about 11 days each), and the two 14-day ServeGen
// traces under the on-demand autoscaler, SkyServe and Bursar's planner. Every replay is one
// window over its whole trace. They make 82 series, 152.5 series-weeks, in 14 workloads, in
// about 35 s on 2 cores, recording included.
func DefaultOptions() Options {
	return Options{
		Data:            DefaultData,
		ReplicaTraces:   []string{"AWS1", "AWS2"},
		ReplicaPolicies: []string{"spothedge", "bursar-direct", "round-robin:1", "even-spread:1"},
		ServingPolicies: []string{"od-autoscale", "skyserve", "bursar-direct"},
	}
}

// Replay runs the replays of o and returns their series, in a fixed order: replica traces, then
// serving traces, each by policy in the order given, then by location. The series are read
// back from the history the replays were recorded into (record), so Replay needs the embedded
// engine (libchdb, make setup). It returns ErrNoData (wrapped with the path) when o.Data has no
// traces.
func Replay(ctx context.Context, o Options) ([]Series, error) {
	if o.Data == "" {
		o.Data = DefaultData
	}
	if _, err := os.Stat(filepath.Join(o.Data, "traces")); err != nil {
		return nil, fmt.Errorf("%w: %s (../shared/data beside the repository): %v", ErrNoData, o.Data, err)
	}
	runs, err := replays(ctx, o)
	if err != nil {
		return nil, err
	}
	return record(ctx, runs)
}

// replays runs the replays of o, in Replay's order.
func replays(ctx context.Context, o Options) ([]run, error) {
	var out []run
	for _, name := range o.ReplicaTraces {
		for _, p := range o.ReplicaPolicies {
			r, err := replicaReplay(ctx, filepath.Join(o.Data, "traces", "skyserve", name), p)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
	}
	if len(o.ServingPolicies) == 0 {
		return out, nil
	}
	for _, demand := range serving.DefaultDemands(o.Data) {
		in, err := serving.Load(serving.Paths{Data: o.Data, Demand: demand})
		if err != nil {
			return nil, err
		}
		for _, p := range o.ServingPolicies {
			r, err := servingReplay(ctx, in, p)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
	}
	return out, nil
}
