package placement

import (
	"slices"
	"time"
)

// This file holds what a caller of PlanJob measures of a job's past, from the job's own
// decisions: the spells with and without spot (Spells, fed a Sighting per decision) and whether
// the job may try an offer again (MayTry). Like PlanJob it reads no clock: now is passed in.

// Sighting is what one of a job's decisions learns of spot.
type Sighting int8

const (
	SpotUnknown Sighting = iota // nothing new: no spot tried, or no answer yet
	SpotThere                   // the job's spot instance runs
	SpotGone                    // every spot offer lost capacity lately
)

// Sight is what the decision at now learns of the job's spot offers est: spot is there while the
// job's spot instance runs (spotRunning: ready, on spot), and gone when every spot offer lost
// capacity at the last decision or since, interval being the time between decisions (a launch
// found none, an instance was reclaimed); otherwise nothing is known of it (an offer not tried
// says nothing), and the spell seen last goes on.
func Sight(spotRunning bool, est []Estimate, now time.Time, interval time.Duration) Sighting {
	if spotRunning {
		return SpotThere
	}
	lost := 0
	for _, e := range est {
		if e.Offer.Market != MarketSpot {
			continue
		}
		if !lostWithin(e.Offer.History, now, interval, true) {
			return SpotUnknown
		}
		lost++
	}
	if lost == 0 {
		return SpotUnknown
	}
	return SpotGone
}

// MayTry says whether a job may launch on the offer of e now, interval being the time between
// its decisions. A launch that finds no capacity is given up at the next report (which wakes a
// decision at once) and the job placed again, so a try costs one report, not an interval, whether
// an instance runs meanwhile (running: a move is make-before-break) or not; and trying is how the
// job learns that spot is back. So it may try again as soon as a whole interval has passed since
// the last loss there, as every decision comes back to it. A job with an instance running may
// whatever the launch chance; an idle one only on offers found likely enough (Usable), since
// PlanJob takes an offer it is told is there for what it costs and its launch chance.
func MayTry(e Estimate, running bool, now time.Time, interval time.Duration) bool {
	if lostWithin(e.Offer.History, now, interval, false) {
		return false
	}
	return running || e.Usable
}

// lostWithin says whether the offer lost capacity less than within ago (or exactly within ago,
// when inclusive): a launch there found none (given up when the next report says so, dated at
// the launch) or an instance there was reclaimed. The launch chance forgets such a loss only over
// its half-life.
func lostWithin(h []Observation, now time.Time, within time.Duration, inclusive bool) bool {
	return slices.ContainsFunc(h, func(o Observation) bool {
		age := now.Sub(o.At)
		lost := o.Kind == ObsLaunchFailed || o.Kind == ObsPreempted
		return lost && age >= 0 && (age < within || inclusive && age == within)
	})
}

// Spells is what PlanJob learns of the past of one job: the spells with no spot offer of the job
// and the runs with one, as the job's decisions saw them (see Sight). Spot is seen only where the
// job tries it, so a decision that learns nothing leaves the current spell going; a spell without
// spot ends at the decision that finds spot running, a run at the one that finds every spot offer
// lost. The zero value has seen nothing.
type Spells struct {
	since, began, gone time.Time // the current spell's start; the first decision; spot last seen gone
	spot, seen         bool      // whether spot is there in the current spell; any decision yet
	assumed            bool      // the current spell is the first, taken as spot before any sighting
	outages, stints    []time.Duration
}

// maxSpells bounds the spells kept of each kind.
const maxSpells = 256

// See records what the decision at now learned of spot. Before anything is seen, spot counts as
// there, as PlanJob takes an offer never tried; that assumed spell is no run seen, and is not
// kept when a sighting ends it.
func (s *Spells) See(sight Sighting, now time.Time) {
	if sight == SpotGone {
		s.gone = now
	}
	spot := sight == SpotThere || sight == SpotUnknown && (s.spot || !s.seen)
	switch {
	case !s.seen:
		s.since, s.began, s.spot, s.seen, s.assumed = now, now, spot, true, sight == SpotUnknown
	case sight != SpotUnknown && s.assumed:
		s.assumed = false
		if spot != s.spot {
			s.since, s.spot = now, spot
		}
	case spot != s.spot:
		d := now.Sub(s.since)
		if s.spot {
			s.stints = append(s.stints, d)[max(0, len(s.stints)+1-maxSpells):]
		} else {
			s.outages = append(s.outages, d)[max(0, len(s.outages)+1-maxSpells):]
		}
		s.since, s.spot = now, spot
	}
}

// Fill sets v's Outage, Outages, SpotFor, SpotRuns and History as of now. In a spell without
// spot, SpotFor is the time since spot was last seen gone: the age a run that began since would
// have at most, which is all the job can know of one before it tries (a job on on-demand moves
// only onto runs old enough, and trying is moving).
func (s *Spells) Fill(v *JobView, now time.Time) {
	cur := now.Sub(s.since)
	v.Outage, v.SpotFor = 0, cur
	if !s.spot {
		gone := s.gone
		if s.since.After(gone) {
			gone = s.since
		}
		v.Outage, v.SpotFor = cur, now.Sub(gone)
	}
	v.Outages, v.SpotRuns, v.History = slices.Clone(s.outages), slices.Clone(s.stints), now.Sub(s.began)
}
