package report

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
)

// launchFailure is one launch the arbiter gave up: it got no capacity (the actuator reported it
// pending) or was not ready within its location's launch timeout. The arbiter announces each as
// an action.updated of kind retire with reason launch_failed, one action per replica given up, so
// the failures are read from the actions the recorder keeps already.
type launchFailure struct {
	Workload string `json:"workload"`
	ActionID string `json:"action_id"`
	Location string `json:"location"`
	Market   string `json:"market"`
	Offer    string `json:"offer"`
	AtMS     int64  `json:"at_ms"`
	provider string
	gpu      string
}

// KindLaunchFailed is the kind of the `report reclaims` rows that count launches given up, beside
// the reclaim kinds (interruption, preempted, ...).
const KindLaunchFailed = events.ReasonLaunchFailed

// launchFailures reads the launches given up in [since, until), filtered by o's dimensions. Each
// failure's provider and GPU model come from what replica.state shows of its group at the time
// (the fleet file's provider when nothing was reported).
func launchFailures(ctx context.Context, q Querier, o Options, since, until time.Time, groups map[fleetGroup][]groupState) ([]launchFailure, error) {
	fs, err := queryRows[launchFailure](ctx, q, fmt.Sprintf(`SELECT workload, action_id, any(location) AS location,
		any(market) AS market, any(offer) AS offer, toUnixTimestamp64Milli(min(at)) AS at_ms
		FROM %s WHERE kind = 'retire' AND reason = %s AND %s
		GROUP BY workload, action_id HAVING at_ms >= %d AND at_ms < %d`,
		q.Table("action_updated"), lit(events.ReasonLaunchFailed),
		where(o.Filter, map[Dim]string{Workload: "workload", Location: "location", Market: "market"}),
		since.UnixMilli(), until.UnixMilli()))
	if err != nil {
		return nil, fmt.Errorf("reading launch failures: %w", err)
	}
	out := fs[:0]
	for _, f := range fs {
		f.provider, f.gpu = o.provider(f.Location), Unknown
		if s, ok := stateAt(groups[fleetGroup{f.Workload, f.Location, f.Market}], f.AtMS); ok {
			f.provider, f.gpu = cmp.Or(s.Provider, f.provider), launchGPU(s, f.Offer)
		}
		if o.Filter.keep(Provider, f.provider) && o.Filter.keep(Region, o.region(f.Location)) && o.Filter.keep(GPU, f.gpu) {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b launchFailure) int {
		return cmp.Or(cmp.Compare(a.AtMS, b.AtMS), cmp.Compare(a.Workload, b.Workload), cmp.Compare(a.ActionID, b.ActionID))
	})
	return out, nil
}

func (f launchFailure) value(col string, o Options) string {
	switch col {
	case "provider":
		return f.provider
	case "location":
		return f.Location
	case "zone":
		return zoneOf(f.Offer)
	case "region":
		return o.region(f.Location)
	case "gpu":
		return f.gpu
	case "kind":
		return KindLaunchFailed
	case "workload":
		return f.Workload
	case "market":
		return f.Market
	}
	return ""
}

// failureNote says how many launches were given up, and where they show.
func failureNote(fs []launchFailure, where string) []string {
	if len(fs) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d launches given up (no capacity, or not ready within the launch timeout): %s",
		len(fs), where)}
}
