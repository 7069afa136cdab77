package report

import (
	"context"
	"fmt"
	"time"
)

// The bases a cost figure can have.
const (
	// BasisEstimated is Bursar's estimate: the integral of the offers' prices over the replicas'
	// ready time.
	BasisEstimated = "estimated"
	// BasisBilled is the providers' billed EffectiveCost where FOCUS exports are imported and
	// matched (report reconcile), and the estimate elsewhere.
	BasisBilled = "billed"
	// basisMixed labels a row summed from both.
	basisMixed = "mixed"
)

// ParseBasis reads --basis.
func ParseBasis(s string) (string, error) {
	switch s {
	case "", BasisEstimated:
		return BasisEstimated, nil
	case BasisBilled:
		return BasisBilled, nil
	}
	return "", fmt.Errorf("--basis %q: want estimated or billed", s)
}

// costUsage is loadUsageOf on the options' basis: with billed, each workload's spend at a location
// on a day where billed charges were matched to it is its billed EffectiveCost, spread over that
// day's usage in proportion to the estimate, and marked Billed.
func costUsage(ctx context.Context, q Querier, o Options, step time.Duration, cols keyCols) ([]Usage, error) {
	us, err := loadUsageOf(ctx, q, o, step, cols)
	if err != nil || o.Basis != BasisBilled {
		return us, err
	}
	rec, err := reconcileLines(ctx, q, o)
	if err != nil {
		return nil, err
	}
	lines := rec.lines
	type wld struct {
		workload, location string
		day                int64
	}
	billed := map[wld]float64{}
	for _, l := range lines {
		if l.Charges > 0 && l.Workload != "" && l.Workload[0] != '(' {
			billed[wld{l.Workload, l.Location, l.Day.Unix()}] += l.Effective
		}
	}
	dayOf := func(u Usage) wld { return wld{u.Workload, u.Location, u.Hour.UTC().Truncate(24 * time.Hour).Unix()} }
	est := map[wld]float64{}
	for _, u := range us {
		est[dayOf(u)] += u.USD
	}
	for i := range us {
		k := dayOf(us[i])
		if b, ok := billed[k]; ok && est[k] > 0 {
			us[i].USD *= b / est[k]
			us[i].Billed = true
		}
	}
	for k, b := range billed { // billed by tag where Bursar estimated nothing
		u := Usage{Key: Key{Workload: k.workload, Location: k.location, Provider: o.provider(k.location)},
			Hour: time.Unix(k.day, 0).UTC(), USD: b, Billed: true}
		if est[k] == 0 && o.keepsAll(u.Key) {
			us = append(us, u)
		}
	}
	return us, nil
}

// basisCount counts a row's usage slots by basis, to say which basis the row used.
type basisCount struct{ billed, all int }

func (b *basisCount) add(u Usage) {
	b.all++
	if u.Billed {
		b.billed++
	}
}

// label is the row's basis: billed or estimated when all its slots are, else mixed.
func (b basisCount) label() string {
	switch {
	case b.billed == 0:
		return BasisEstimated
	case b.billed == b.all:
		return BasisBilled
	}
	return basisMixed
}

// basisNote says what the basis column means, for the reports that have one.
func basisNote(o Options) string {
	if o.Basis != BasisBilled {
		return "basis: estimated (offer prices x ready time); --basis billed uses imported FOCUS billing where matched"
	}
	return "basis: billed = FOCUS EffectiveCost of the charges matched to the row (report reconcile), " +
		"estimated where none were imported or matched, mixed where both"
}

// keepsAll reports whether the filter keeps a key on every dimension.
func (o Options) keepsAll(k Key) bool {
	for _, d := range Dims {
		if !o.Filter.keep(d, k.dim(d, o)) {
			return false
		}
	}
	return true
}
