package arbiter

import (
	"cmp"
	"slices"
	"sync"

	"github.com/bursar-dev/bursar/internal/placement"
)

// offers are the priced offers by id. The price fold updates them thousands of times a second
// while a reclaim's path reads the offer it launches on; a sync.Map lets both go without a lock
// (a known key is read and replaced atomically; only a new offer takes the map's own lock). A
// stored offer is never changed: a new price stores a new one.
type offers struct{ m sync.Map } // string → *placement.Offer

// set stores o; it reports whether o is new or its price changed.
func (s *offers) set(o *placement.Offer) bool {
	if old, ok := s.m.Load(o.ID); ok && old.(*placement.Offer).PricePerHour == o.PricePerHour {
		return false
	}
	s.m.Store(o.ID, o)
	return true
}

func (s *offers) get(id string) (placement.Offer, bool) {
	v, ok := s.m.Load(id)
	if !ok {
		return placement.Offer{}, false
	}
	return *v.(*placement.Offer), true
}

// all returns a copy of every offer, by id.
func (s *offers) all() []placement.Offer {
	var out []placement.Offer
	s.m.Range(func(_, v any) bool {
		out = append(out, *v.(*placement.Offer))
		return true
	})
	slices.SortFunc(out, func(a, b placement.Offer) int { return cmp.Compare(a.ID, b.ID) })
	return out
}
