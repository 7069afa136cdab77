package report

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// group is what the arbiter observes and reports as one: a workload's replicas at one location
// on one market. A group runs one offer at a time; when it moves to another offer the old offer's
// series simply stops being reported (its last sample still says it was ready), so the state of
// a group at time t is the samples at the group's latest report at or before t, never the latest
// sample of each offer on its own.
type fleetGroup struct {
	Workload string `json:"workload"`
	Location string `json:"location"`
	Market   string `json:"market"`
}

// groupState is one group's state from one report on, until its next change.
type groupState struct {
	fleetGroup
	Provider string `json:"provider"`
	AtMS     int64  `json:"at_ms"`
	Ready    int64  `json:"ready"`
	Desired  int64  `json:"desired"`
	// The offers reported at that instant, with their GPU models and ready counts, in one order.
	Offers []string `json:"offers"`
	GPUs   []string `json:"gpus"`
	Readys []int64  `json:"readys"`
	// Desireds and Prices are each offer's desired count and price per replica-hour, in the same
	// order.
	Desireds []int64   `json:"desireds"`
	Prices   []float64 `json:"prices"`
	// Before says the state was reported before the window's start (it is the group's state at
	// the start).
	Before bool `json:"before"`
}

// zoneOf reads the zone of an offer id, "location/zone/instance-type/market"; "" when the
// offer names none ("-").
func zoneOf(offer string) string {
	parts := strings.Split(offer, "/")
	if len(parts) != 4 || parts[1] == "-" {
		return ""
	}
	return parts[1]
}

// fleetStates reads the groups' states from replica_state: for each group, its state at since
// (its latest report before since) and every change after it up to end, in time order. Reports
// that repeat the previous one are dropped in the query, so a group reported every minute for a
// month sends back only its changes. Duplicate rows (a redelivered event) count once.
func fleetStates(ctx context.Context, q Querier, f Filter, since, end time.Time) ([]groupState, error) {
	rs := q.Table("replica_state")
	cond := where(f, map[Dim]string{Workload: "workload", Location: "location", Provider: "provider", Market: "market"})
	rows, err := queryRows[groupState](ctx, q, fmt.Sprintf(`SELECT workload, location, market, provider, at_ms, ready,
		desired, offers, gpus, readys, desireds, prices, before FROM (
		SELECT *, lagInFrame(sig, 1, toUInt64(0)) OVER (PARTITION BY workload, location, market ORDER BY at_ms
			ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS prev_sig
		FROM (
			SELECT workload, location, market, any(prov) AS provider, toUnixTimestamp64Milli(at) AS at_ms,
				toInt64(sum(r)) AS ready, toInt64(sum(d)) AS desired,
				groupArray(offer) AS offers, groupArray(gpu) AS gpus, groupArray(r) AS readys,
				groupArray(d) AS desireds, groupArray(p) AS prices,
				toBool(at < %[2]s) AS before,
				cityHash64(arraySort(groupArray((offer, gpu, r, d)))) AS sig
			FROM (
				SELECT workload, location, market, offer, at, any(provider) AS prov, any(gpu_model) AS gpu,
					max(ready) AS r, max(desired) AS d, max(usd_per_hour) AS p
				FROM %[1]s
				WHERE %[4]s AND ((at >= %[2]s AND at < %[3]s) OR (workload, location, market, at) IN (
					SELECT workload, location, market, max(at) FROM %[1]s WHERE at < %[2]s AND %[4]s
					GROUP BY workload, location, market))
				GROUP BY workload, location, market, offer, at)
			GROUP BY workload, location, market, at))
		WHERE sig != prev_sig
		ORDER BY at_ms, workload, location, market`, rs, ms64(since), ms64(end), cond))
	if err != nil {
		return nil, fmt.Errorf("reading replica states: %w", err)
	}
	return rows, nil
}

// byGroup splits states by group, each group's in time order.
func byGroup(states []groupState) map[fleetGroup][]groupState {
	out := map[fleetGroup][]groupState{}
	for _, s := range states {
		out[s.fleetGroup] = append(out[s.fleetGroup], s)
	}
	return out
}

// stateAt returns the group's state at t (the latest at or before t), or false before its first.
func stateAt(states []groupState, t int64) (groupState, bool) {
	i, found := slices.BinarySearchFunc(states, t, func(s groupState, t int64) int {
		switch {
		case s.AtMS < t:
			return -1
		case s.AtMS > t:
			return 1
		}
		return 0
	})
	if found {
		return states[i], true
	}
	if i == 0 {
		return groupState{}, false
	}
	return states[i-1], true
}

// nextState returns the group's first state after t, or false.
func nextState(states []groupState, t int64) (groupState, bool) {
	i := slices.IndexFunc(states, func(s groupState) bool { return s.AtMS > t })
	if i < 0 {
		return groupState{}, false
	}
	return states[i], true
}

// arrival is ready replicas appearing in a group: a report whose ready count is above the one
// before it (a group's first report in the window counts from zero).
type arrival struct {
	fleetGroup
	AtMS int64
	N    int64
}

// arrivals lists every group's ready replicas appearing, in time order.
func arrivals(states []groupState) []arrival {
	var out []arrival
	prev := map[fleetGroup]int64{}
	for _, s := range states {
		p, seen := prev[s.fleetGroup]
		prev[s.fleetGroup] = s.Ready
		if s.Before || (seen && s.Ready <= p) || (!seen && s.Ready <= 0) {
			continue
		}
		out = append(out, arrival{s.fleetGroup, s.AtMS, s.Ready - p})
	}
	return out
}
