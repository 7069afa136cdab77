package report

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/placement"
)

// How far before a plan its cause is looked for: a reclaim notice is acted on within a tick or
// two, a price within the arbiter's price refresh, demand over its rate window.
const (
	reclaimLookback = 10 * time.Minute
	priceLookback   = time.Hour
	demandLookback  = 5 * time.Minute
)

// cause is the event a plan answered. Kind is empty when none was found; Detail then says what
// was looked for, so a missing link reads as missing, never as a guess.
type cause struct {
	Kind, ID string
	AtMS     int64
	Detail   string
}

// findCauses links each plan to its cause, by the first of its reasons that has one: a reclaim
// (or a fallback from spot) to the reclaim notice at the location it lost, a cheaper offer to the
// price change of the offer it moved to, demand to the workload's token rate before it.
func findCauses(ctx context.Context, q Querier, o Options, ps []*plan) ([]cause, error) {
	out := make([]cause, len(ps))
	if len(ps) == 0 {
		return out, nil
	}
	rc, err := loadReclaims(ctx, q, ps)
	if err != nil {
		return nil, err
	}
	pr, err := loadPriceChanges(ctx, q, ps)
	if err != nil {
		return nil, err
	}
	dm, err := loadTokenMinutes(ctx, q, ps)
	if err != nil {
		return nil, err
	}
	for i, p := range ps {
		out[i] = p.cause(o, rc, pr, dm)
	}
	return out, nil
}

func (p *plan) cause(o Options, rc []reclaimNotice, pr []priceObs, dm []tokenMinute) cause {
	reasons := p.reasons()
	var looked []string
	for _, r := range reasons {
		switch placement.Reason(r) {
		case placement.ReasonReclaim, placement.ReasonFallback:
			if c, ok := reclaimCause(p, rc); ok {
				return c
			}
			looked = append(looked, fmt.Sprintf("no capacity_reclaimed at %s in the %s before", strings.Join(p.locations(r), ","), reclaimLookback))
		case placement.ReasonCheaperOffer:
			if c, ok := priceCause(o, p, pr); ok {
				return c
			}
			looked = append(looked, fmt.Sprintf("no price change of %s in the %s before", strings.Join(p.movedTo(), ","), priceLookback))
		case placement.ReasonDemandUp, placement.ReasonDemandDown:
			if c, ok := demandCause(p, dm); ok {
				return c
			}
			looked = append(looked, fmt.Sprintf("no tokens_sample of %s in the %s before", p.Workload, 2*demandLookback))
		}
	}
	if len(looked) == 0 {
		return cause{Detail: "no event is linked to reasons " + strings.Join(reasons, ",")}
	}
	return cause{Detail: strings.Join(looked, "; ")}
}

// locations are where the plan's actions with reason r act.
func (p *plan) locations(r string) []string {
	var out []string
	for _, a := range p.Actions {
		if a.Reason == r && !slices.Contains(out, a.Location) {
			out = append(out, a.Location)
		}
	}
	return out
}

// movedTo are the offers the plan's cheaper_offer launches move to.
func (p *plan) movedTo() []string {
	var out []string
	for _, a := range p.Actions {
		if a.Reason == string(placement.ReasonCheaperOffer) && a.Delta > 0 && !slices.Contains(out, a.Offer) {
			out = append(out, a.Offer)
		}
	}
	return out
}

// span is the earliest and latest plan times, for the queries' bounds.
func span(ps []*plan) (lo, hi int64) {
	lo, hi = ps[0].AtMS, ps[0].AtMS
	for _, p := range ps {
		lo, hi = min(lo, p.AtMS), max(hi, p.AtMS)
	}
	return lo, hi
}

type reclaimNotice struct {
	ID       string `json:"id"`
	AtMS     int64  `json:"at_ms"`
	Location string `json:"location"`
	Kind     string `json:"kind"`
	Instance string `json:"instance"`
}

func loadReclaims(ctx context.Context, q Querier, ps []*plan) ([]reclaimNotice, error) {
	locs := map[string]bool{}
	for _, p := range ps {
		for _, r := range []placement.Reason{placement.ReasonReclaim, placement.ReasonFallback} {
			for _, l := range p.locations(string(r)) {
				locs[l] = true
			}
		}
	}
	if len(locs) == 0 {
		return nil, nil
	}
	lo, hi := span(ps)
	rows, err := queryRows[reclaimNotice](ctx, q, fmt.Sprintf(`SELECT id, toUnixTimestamp64Milli(at) AS at_ms, location,
		kind, instance FROM %s WHERE location IN (%s) AND at >= %s AND at <= %s ORDER BY at_ms, id LIMIT 1 BY id`,
		q.Table("capacity_reclaimed"), lits(sortedKeys(locs)), ms64(time.UnixMilli(lo).Add(-reclaimLookback)), ms64(time.UnixMilli(hi))))
	if err != nil {
		return nil, fmt.Errorf("reading reclaim notices: %w", err)
	}
	return rows, nil
}

// reclaimCause is the notice at a location the plan's reclaim actions act on, closest before it.
func reclaimCause(p *plan, rc []reclaimNotice) (cause, bool) {
	locs := append(p.locations(string(placement.ReasonReclaim)), p.locations(string(placement.ReasonFallback))...)
	var best *reclaimNotice
	for i, n := range rc {
		if n.AtMS <= p.AtMS && n.AtMS >= p.AtMS-reclaimLookback.Milliseconds() && slices.Contains(locs, n.Location) {
			best = &rc[i] // in time order: the last that fits is the closest
		}
	}
	if best == nil {
		return cause{}, false
	}
	return cause{Kind: "capacity_reclaimed", ID: best.ID, AtMS: best.AtMS,
		Detail: fmt.Sprintf("%s of instance %s at %s", cmp.Or(best.Kind, "reclaim"), cmp.Or(best.Instance, "?"), best.Location)}, true
}
