package placement

import (
	"cmp"
	"slices"
)

// bestSwap replaces a removable slot with an alternative, trying pairs by how little they raise
// the cost and taking the first after which keep still holds (so fixing one rule does not break
// another); when none keeps it, it takes the cheapest pair.
func (s *selection) bestSwap(alts []option, removable func(slot) bool, keep func() bool) bool {
	type pair struct {
		i     int
		a     option
		delta float64
	}
	var pairs []pair
	alts = s.distinct(alts)
	seen := map[swapKey]bool{}
	for i, sl := range s.slots {
		if k := (swapKey{sl.offer, sl.replica < 0}); !removable(sl) || seen[k] {
			continue
		} else {
			seen[k] = true
		}
		c := s.slotCost(sl)
		for _, a := range alts {
			if a.inc >= 0 && s.incs[a.inc].replica == sl.replica {
				continue
			}
			pairs = append(pairs, pair{i, a, a.cost - c})
		}
	}
	if len(pairs) == 0 {
		return false
	}
	slices.SortStableFunc(pairs, func(x, y pair) int { return cmp.Compare(x.delta, y.delta) })
	for _, p := range pairs {
		if s.wp.halted() {
			return false
		}
		sl := s.slots[p.i]
		s.remove(p.i)
		s.add(p.a, "")
		if keep() && s.holdsRate() {
			return true
		}
		s.remove(len(s.slots) - 1)
		s.restore(p.i, sl)
	}
	// None keeps every rule: the cheapest pair that keeps the rate (any pair, planned in replicas).
	for _, p := range pairs {
		sl := s.slots[p.i]
		s.remove(p.i)
		s.add(p.a, "")
		if s.holdsRate() {
			return true
		}
		s.remove(len(s.slots) - 1)
		s.restore(p.i, sl)
	}
	return false
}

// swapKey is what matters about a slot or an option to a swap: its offer and whether it is a new
// launch. Every incumbent on one offer costs the same, so two with one key are interchangeable,
// and a swap search tries only the first, which keeps it from growing with the square of the
// replica count.
type swapKey struct {
	offer int
	fresh bool
}

// distinct is opts with only the first option of each swap key, in order.
func (s *selection) distinct(opts []option) []option {
	seen := make(map[swapKey]bool, len(opts))
	out := make([]option, 0, len(opts))
	for _, o := range opts {
		k := swapKey{s.offerOf(o), o.inc < 0}
		if !seen[k] {
			seen[k] = true
			out = append(out, o)
		}
	}
	return out
}
