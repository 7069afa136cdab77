package billing

import (
	"sort"
	"time"
)

// Estimate is what Bursar estimated one workload cost on one instance type at one location in
// one hour.
type Estimate struct {
	Workload, Location, InstanceType string
	Hour                             time.Time
	USD                              float64
}

// Locator says which of Bursar's locations a charge was incurred at (bursar.yaml's locations:
// provider, region, zone and account ids), and which workloads exist.
type Locator interface {
	// Locate returns the location's name, or false when no location matches.
	Locate(c Charge) (string, bool)
	// Workload reports whether a workload of that name exists.
	Workload(name string) bool
}

// The names reconciliation gives lines that belong to no workload.
const (
	Unmatched        = "(unmatched)"         // billed usage Bursar does not know about
	UnusedCommitment = "(unused commitment)" // the unused part of a commitment discount
)

// Line is one workload's (or one kind of charge's) billed and estimated cost at one location on
// one day.
type Line struct {
	Workload string
	Location string
	Day      time.Time
	// Estimated is Bursar's estimate; Billed, Effective and Contracted sum the FOCUS columns of
	// the charges matched here (in part, when a charge was shared).
	Estimated, Billed, Effective, Contracted float64
	// Commitment is what commitment discounts changed the cost by (EffectiveCost minus
	// ContractedCost on charges with a CommitmentDiscountId): negative where they saved.
	Commitment float64
	// Charges counts the charges matched (a shared charge counts once per line it reached), and
	// ByResource, ByTag, BySKU and ByLocation how they were matched.
	Charges, ByResource, ByTag, BySKU, ByLocation int
}

// Matched counts the usage charges (not credits, tax, purchases, adjustments or unused
// commitments) by the rule that matched them, so a reader can tell how much of the bill was
// matched exactly (by resource id or tag) and how much shared.
type Matched struct {
	ByResource, ByTag, BySKU, ByLocation, Unmatched int
}

// Difference is EffectiveCost less the estimate: what the bill says the estimate missed.
func (l *Line) Difference() float64 { return l.Effective - l.Estimated }

// workloadTags are the tag keys that name the workload a resource ran (cost allocation tags and
// Kubernetes labels as the providers export them).
var workloadTags = []string{"bursar-workload", "bursar.dev/workload", "bursar:workload", "bursar_workload"}

type lineKey struct {
	workload, location string
	day                int64
}

// reconciler matches charges to estimates and sums both into lines.
type reconciler struct {
	loc   Locator
	lines map[lineKey]*Line
	// byLoc holds the estimates of each location, for matching by location and SKU.
	byLoc   map[string][]Estimate
	held    holdings
	matched Matched
}

// Reconcile matches each billed charge to what Bursar ran. A usage charge whose ResourceId is an
// instance that replicas held (held) during its charge period goes to their workloads, in
// proportion to the time each held it, at their location (a charge that has a location must be
// at theirs); else one whose tags name a workload goes to it; else it is shared, in proportion to
// the estimates, among the workloads that ran its instance type at its location during its
// charge period (any instance type there when the charge names none), leaving out, for a charge
// that names its resource, the hours whose replicas named other instances; else it is unmatched.
// Charges of other categories (credits, tax, purchases, adjustments) and unused commitments are
// lines of their own at their location. A usage charge at no known location and held by no
// replica is unmatched at "<provider>/<region>". Lines are by UTC day, sorted.
func Reconcile(charges []Charge, est []Estimate, held []Holding, loc Locator) ([]Line, Matched) {
	r := &reconciler{loc: loc, lines: map[lineKey]*Line{}, byLoc: map[string][]Estimate{}, held: newHoldings(held)}
	for _, e := range est {
		r.line(e.Workload, e.Location, e.Hour).Estimated += e.USD
		r.byLoc[e.Location] = append(r.byLoc[e.Location], e)
	}
	for _, c := range charges {
		r.charge(c)
	}
	out := make([]Line, 0, len(r.lines))
	for _, l := range r.lines {
		out = append(out, *l)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if !a.Day.Equal(b.Day) {
			return a.Day.Before(b.Day)
		}
		if a.Location != b.Location {
			return a.Location < b.Location
		}
		return a.Workload < b.Workload
	})
	return out, r.matched
}

func (r *reconciler) line(workload, location string, t time.Time) *Line {
	day := t.UTC().Truncate(24 * time.Hour)
	k := lineKey{workload, location, day.Unix()}
	l := r.lines[k]
	if l == nil {
		l = &Line{Workload: workload, Location: location, Day: day}
		r.lines[k] = l
	}
	return l
}

// add puts share of charge c on a line.
func (r *reconciler) add(l *Line, c Charge, share float64) {
	l.Billed += share * c.Billed
	l.Effective += share * c.Effective
	l.Contracted += share * c.Contracted
	if c.CommitmentID != "" {
		l.Commitment += share * (c.Effective - c.Contracted)
	}
	l.Charges++
}

func (r *reconciler) charge(c Charge) {
	loc, ok := r.loc.Locate(c)
	if !ok {
		region := c.Region
		if region == "" {
			region = "*"
		}
		loc = ProviderKey(c.Provider) + "/" + region
	}
	switch {
	case c.Category != "Usage":
		r.spread("("+lowerCategory(c.Category)+")", loc, c)
	case c.CommitmentStatus == "Unused":
		r.spread(UnusedCommitment, loc, c)
	case r.share(c, r.held.holders(c, loc, ok), func(l *Line) { l.ByResource++ }):
		r.matched.ByResource++
	case !ok:
		r.spread(Unmatched, loc, c)
		r.matched.Unmatched++
	default:
		r.usage(c, loc)
	}
}

// share puts charge c on the lines weighed, in proportion to the weights, marking each line;
// false when there is nothing to weigh.
func (r *reconciler) share(c Charge, weights map[lineKey]float64, mark func(*Line)) bool {
	var total float64
	for _, w := range weights {
		total += w
	}
	if total <= 0 {
		return false
	}
	for k, w := range weights {
		l := r.line(k.workload, k.location, time.Unix(k.day, 0))
		r.add(l, c, w/total)
		mark(l)
	}
	return true
}

// usage matches a usage charge at a known location.
func (r *reconciler) usage(c Charge, loc string) {
	for _, k := range workloadTags {
		if w := c.Tags[k]; w != "" && r.loc.Workload(w) {
			for _, d := range days(c.Start, c.End) {
				l := r.line(w, loc, d.day)
				r.add(l, c, d.frac)
				l.ByTag++
			}
			r.matched.ByTag++
			return
		}
	}
	// A machine's charge that names its resource is not the workloads' whose replicas there named
	// their own (other) instances in that hour.
	others := c.ResourceID != "" && c.InstanceType != ""
	weights := map[lineKey]float64{}
	for _, e := range r.byLoc[loc] {
		if e.Hour.Before(c.Start) || !e.Hour.Before(c.End) || (c.InstanceType != "" && e.InstanceType != c.InstanceType) ||
			(others && r.held.namedAt(e.Workload, loc, e.Hour)) {
			continue
		}
		weights[lineKey{e.Workload, loc, e.Hour.UTC().Truncate(24 * time.Hour).Unix()}] += e.USD
	}
	bySKU := c.InstanceType != ""
	switch {
	case !r.share(c, weights, func(l *Line) {
		if bySKU {
			l.BySKU++
		} else {
			l.ByLocation++
		}
	}):
		r.spread(Unmatched, loc, c)
		r.matched.Unmatched++
	case bySKU:
		r.matched.BySKU++
	default:
		r.matched.ByLocation++
	}
}

// spread puts a charge on one line per day of its charge period, in proportion to the time.
func (r *reconciler) spread(workload, loc string, c Charge) {
	for _, d := range days(c.Start, c.End) {
		r.add(r.line(workload, loc, d.day), c, d.frac)
	}
}

type dayShare struct {
	day  time.Time
	frac float64
}

// days splits [start, end) at UTC midnights, each day with its share of the whole.
func days(start, end time.Time) []dayShare {
	total := end.Sub(start)
	if total <= 0 {
		return []dayShare{{start, 1}}
	}
	var out []dayShare
	for t := start; t.Before(end); {
		next := t.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
		if next.After(end) {
			next = end
		}
		out = append(out, dayShare{t, float64(next.Sub(t)) / float64(total)})
		t = next
	}
	return out
}

func lowerCategory(c string) string {
	switch c {
	case "Tax":
		return "tax"
	case "Credit":
		return "credits"
	case "Purchase":
		return "purchases"
	case "Adjustment":
		return "adjustments"
	}
	return "other"
}

// Within is the part of the charge inside [since, until), its amounts in proportion to the time
// (a monthly charge over a week's window counts a week's share); false when no part is.
func (c Charge) Within(since, until time.Time) (Charge, bool) {
	start, end := c.Start, c.End
	if start.Before(since) {
		start = since
	}
	if end.After(until) {
		end = until
	}
	if !end.After(start) {
		return Charge{}, false
	}
	if start.Equal(c.Start) && end.Equal(c.End) {
		return c, true
	}
	f := float64(end.Sub(start)) / float64(c.End.Sub(c.Start))
	c.Billed, c.Effective, c.Contracted, c.List, c.Quantity = f*c.Billed, f*c.Effective, f*c.Contracted, f*c.List, f*c.Quantity
	c.Start, c.End = start, end
	return c, true
}
