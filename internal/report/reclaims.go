package report

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/cli"
)

// reclaim is one capacity.reclaimed notice.
type reclaim struct {
	Provider string `json:"provider"`
	Location string `json:"location"`
	Zone     string `json:"zone"`
	Kind     string `json:"kind"`
	NoticeMS int64  `json:"notice_ms"`
	Deadline int64  `json:"deadline_ms"`
}

// actionSpan is one action's life: when it was proposed and when it was applied.
type actionSpan struct {
	ActionID   string `json:"action_id"`
	Location   string `json:"location"`
	Reason     string `json:"reason"`
	ProposedMS int64  `json:"proposed_ms"`
	AppliedMS  int64  `json:"applied_ms"`
}

// Reclaims is `report reclaims`: reclaim notices by provider, location, zone and kind, the notice
// they gave, the time to the replacement replica (the first replacement launch applied after the
// notice, each launch replacing one notice, in time order), and per provider the time from a
// launch being proposed to its replica applied ready, the "time to first GPU".
func Reclaims(ctx context.Context, q Querier, o Options) (*Result, error) {
	rs, err := queryRows[reclaim](ctx, q, fmt.Sprintf(`SELECT provider, location, zone, kind,
		toUnixTimestamp64Milli(notice_at) AS notice_ms, toUnixTimestamp64Milli(deadline) AS deadline_ms
		FROM %s WHERE notice_at >= %s AND notice_at < %s AND %s ORDER BY notice_at, id`,
		q.Table("capacity_reclaimed"), ms64(o.Window.Since), ms64(o.Window.Until),
		where(o.Filter, map[Dim]string{Provider: "provider", Location: "location", Region: "region"})))
	if err != nil {
		return nil, fmt.Errorf("reading reclaims: %w", err)
	}
	spans, err := queryRows[actionSpan](ctx, q, fmt.Sprintf(`SELECT action_id, any(location) AS location, any(reason) AS reason,
		toUnixTimestamp64Milli(minIf(at, status = 'proposed')) AS proposed_ms,
		toUnixTimestamp64Milli(minIf(at, status = 'applied')) AS applied_ms
		FROM %s WHERE kind = 'launch' AND at >= %s AND at < %s
		GROUP BY action_id HAVING countIf(status = 'applied') > 0 ORDER BY applied_ms, action_id`,
		q.Table("action_updated"), ms64(o.Window.Since), ms64(o.Window.Until.Add(24*time.Hour))))
	if err != nil {
		return nil, fmt.Errorf("reading actions: %w", err)
	}
	replaced := matchReplacements(rs, spans)
	type agg struct {
		provider, location, zone, kind string
		n, replaced                    int
		notice, toReplace              time.Duration
	}
	groups := map[string]*agg{}
	for i, r := range rs {
		k := strings.Join([]string{r.Provider, r.Location, r.Zone, r.Kind}, "\x00")
		a := groups[k]
		if a == nil {
			a = &agg{provider: r.Provider, location: r.Location, zone: r.Zone, kind: r.Kind}
			groups[k] = a
		}
		a.n++
		a.notice += time.Duration(r.Deadline-r.NoticeMS) * time.Millisecond
		if replaced[i] >= 0 {
			a.replaced++
			a.toReplace += time.Duration(replaced[i]) * time.Millisecond
		}
	}
	res := &Result{Title: "Reclaims, " + o.Window.String(),
		Columns: []string{"provider", "location", "zone", "kind", "reclaims", "avg_notice_s", "replaced", "avg_to_replacement_s"}}
	for _, k := range sortedKeys(groups) {
		a := groups[k]
		res.Rows = append(res.Rows, cli.Row{"provider": a.provider, "location": a.location, "zone": a.zone, "kind": a.kind,
			"reclaims": a.n, "avg_notice_s": round(a.notice.Seconds()/float64(a.n), 1), "replaced": a.replaced,
			"avg_to_replacement_s": round(ratio(a.toReplace.Seconds(), float64(a.replaced)), 1)})
	}
	res.Notes = firstGPUNotes(spans, o)
	return res, nil
}

// matchReplacements returns, for each reclaim, the milliseconds from its notice to the replacement
// launch applied for it, or -1. Reclaims take, in notice order, the earliest applied launch for a
// reclaim that no earlier notice took.
func matchReplacements(rs []reclaim, spans []actionSpan) []int64 {
	out := make([]int64, len(rs))
	used := make([]bool, len(spans))
	for i, r := range rs {
		out[i] = -1
		for j, s := range spans {
			if used[j] || s.Reason != "reclaim" || s.AppliedMS < r.NoticeMS {
				continue
			}
			used[j], out[i] = true, s.AppliedMS-r.NoticeMS
			break
		}
	}
	return out
}

// firstGPUNotes gives per provider the average time from a launch proposed to applied.
func firstGPUNotes(spans []actionSpan, o Options) []string {
	sum, n := map[string]time.Duration{}, map[string]int{}
	for _, s := range spans {
		if s.ProposedMS <= 0 || s.AppliedMS < s.ProposedMS {
			continue
		}
		p := o.provider(s.Location)
		if p == "" {
			p = s.Location
		}
		sum[p] += time.Duration(s.AppliedMS-s.ProposedMS) * time.Millisecond
		n[p]++
	}
	var out []string
	for _, p := range sortedKeys(n) {
		out = append(out, fmt.Sprintf("time to first GPU at %s: %.1f s on average over %d launches", p,
			sum[p].Seconds()/float64(n[p]), n[p]))
	}
	sort.Strings(out)
	return out
}
