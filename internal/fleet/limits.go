package fleet

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/bursar-dev/bursar/internal/placement"
	"github.com/bursar-dev/bursar/internal/pricing"
)

// MaxReplicas is the most replicas a workload may name in replicas.min or replicas.max: the
// planner's own limit per workload (placement.MaxReplicas), which a real fleet never reaches and
// which keeps one plan under a second. A service larger than that is several workloads.
const MaxReplicas = placement.MaxReplicas

// checkReplicas bounds replicas.min and replicas.max.
func (w *Workload) checkReplicas(at func(...any) []any) error {
	tooMany := fmt.Sprintf("want at most %d replicas per workload (the planner's limit); split a larger service into several workloads", MaxReplicas)
	switch {
	case w.Replicas.Min < 0:
		return fail("want 0 or more", at("replicas", "min")...)
	case w.Replicas.Min > MaxReplicas:
		return fail(tooMany, at("replicas", "min")...)
	case w.Replicas.Max > MaxReplicas:
		return fail(tooMany, at("replicas", "max")...)
	case w.Replicas.Max < 0:
		return fail("want 0 (no bound beyond demand) or more", at("replicas", "max")...)
	case w.Replicas.Max != 0 && w.Replicas.Max < w.Replicas.Min:
		return fail(fmt.Sprintf("max %d is below min %d", w.Replicas.Max, w.Replicas.Min), at("replicas", "max")...)
	}
	return nil
}

// checkGPU makes sure the GPUs a workload asks for exist: a model name that is not one of the
// canonical names price events carry, or a memory no GPU has, matches no offer, and the workload
// would place nothing without a word.
func (g *GPU) checkGPU(at func(...any) []any) error {
	for j, m := range g.Models {
		if msg := modelProblem(m); msg != "" {
			return fail(msg, at("gpu", "models", j)...)
		}
	}
	if len(g.Models) == 0 && g.MinMemoryGB > 0 {
		largest := slices.MaxFunc(pricing.GPUs(), func(a, b pricing.GPU) int { return cmp.Compare(a.MemoryGB, b.MemoryGB) })
		if g.MinMemoryGB > float64(largest.MemoryGB) {
			return fail(fmt.Sprintf("no known GPU has %g GB; the largest is %s with %d GB", g.MinMemoryGB, largest.Name, largest.MemoryGB),
				at("gpu", "min_memory_gb")...)
		}
	}
	return nil
}

// modelProblem says what is wrong with a GPU model name, "" when it is a canonical one.
func modelProblem(name string) string {
	if _, ok := pricing.Canonical(name); ok {
		return ""
	}
	names := gpuNames()
	for _, n := range names {
		if strings.EqualFold(n, name) {
			return fmt.Sprintf("unknown GPU model %q; names are case-sensitive: did you mean %s?", name, n)
		}
	}
	var sizes []string // the canonical names of name's memory sizes: A100 → A100-40GB, A100-80GB
	for _, n := range names {
		if strings.HasPrefix(strings.ToUpper(n), strings.ToUpper(name)+"-") {
			sizes = append(sizes, n)
		}
	}
	switch len(sizes) {
	case 0:
	case 1:
		return fmt.Sprintf("unknown GPU model %q; did you mean %s?", name, sizes[0])
	default:
		return fmt.Sprintf("ambiguous GPU model %q: it could mean %s; list each one the workload can use", name, orList(sizes))
	}
	return fmt.Sprintf("unknown GPU model %q; the nearest known are %s (docs/fleet.md lists them all)", name,
		strings.Join(nearest(name, names, 3), ", "))
}

func gpuNames() []string {
	var out []string
	for _, g := range pricing.GPUs() {
		out = append(out, g.Name)
	}
	return out
}

func orList(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}

// nearest is the k names closest to name by edit distance, ignoring case; ties keep names' order.
func nearest(name string, names []string, k int) []string {
	type scored struct {
		name string
		d    int
	}
	var all []scored
	for _, n := range names {
		all = append(all, scored{n, editDistance(strings.ToUpper(name), strings.ToUpper(n))})
	}
	slices.SortStableFunc(all, func(a, b scored) int { return cmp.Compare(a.d, b.d) })
	var out []string
	for _, s := range all[:min(k, len(all))] {
		out = append(out, s.name)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, by bytes (GPU names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// checkResidency makes sure some location carries one of the workload's residency tags: otherwise
// the planner may place it nowhere.
func (w *Workload) checkResidency(c *Config, at func(...any) []any) error {
	if len(w.Residency) == 0 {
		return nil
	}
	var tags []string
	for _, l := range c.Locations {
		for _, t := range l.Residency {
			if slices.Contains(w.Residency, t) {
				return nil
			}
			if !slices.Contains(tags, t) {
				tags = append(tags, t)
			}
		}
	}
	have := "no location carries a residency tag"
	if len(tags) > 0 {
		slices.Sort(tags)
		have = "the locations carry " + strings.Join(tags, ", ")
	}
	return fail(fmt.Sprintf("no location satisfies residency %s (%s); fix the tag or add it to a location's residency",
		strings.Join(w.Residency, ", "), have), at("residency")...)
}
