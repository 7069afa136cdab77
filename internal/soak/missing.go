package soak

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// origin is where a published event was found: its stream, sequence and the time the stream
// stored it (wall time), and the event's own time. An event the bus acknowledged to the
// collector that the stream no longer holds has no sequence.
type origin struct {
	id         string
	stream     string
	seq        uint64
	stored, at time.Time
}

// missing are the published events not among seen, in stream order.
func missing(published map[string]origin, seen map[string]bool) []origin {
	var out []origin
	for id, o := range published {
		if !seen[id] {
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b origin) int {
		return cmp.Or(cmp.Compare(a.stream, b.stream), cmp.Compare(a.seq, b.seq), cmp.Compare(a.id, b.id))
	})
	return out
}

// shownMissing is how many missing events a failure names; the count says how many more.
const shownMissing = 8

// describeMissing names the missing events (id, stream sequence, event and store time) and, for
// each, the faults nearest to it in time, so a loss can be traced to the fault that caused it.
func describeMissing(miss []origin, timeline []event) string {
	var b strings.Builder
	for i, o := range miss {
		if i == shownMissing {
			fmt.Fprintf(&b, "; and %d more", len(miss)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(o.String())
		if near := nearest(timeline, o.stored, 2); len(near) > 0 && !o.stored.IsZero() {
			b.WriteString(", nearest faults: " + strings.Join(near, ", "))
		}
	}
	return b.String()
}

func (o origin) String() string {
	if o.seq == 0 {
		return fmt.Sprintf("%s (acked to its publisher; %s no longer holds it)", o.id, o.stream)
	}
	return fmt.Sprintf("%s (%s seq %d, at %s, stored %s)", o.id, o.stream, o.seq,
		o.at.UTC().Format(time.RFC3339), o.stored.UTC().Format("15:04:05.000"))
}

// nearest are the n faults of the timeline closest in wall time to t, each with its market time
// and how long before or after t it began.
func nearest(timeline []event, t time.Time, n int) []string {
	byGap := slices.Clone(timeline)
	gap := func(e event) time.Duration { return e.wall.Sub(t).Abs() }
	slices.SortStableFunc(byGap, func(a, b event) int { return cmp.Compare(gap(a), gap(b)) })
	var out []string
	for _, e := range byGap[:min(n, len(byGap))] {
		rel := "after"
		if e.wall.Before(t) {
			rel = "before"
		}
		out = append(out, fmt.Sprintf("%q at %s (tick %d, %s %s)", e.what, e.at.UTC().Format(time.RFC3339), e.tick,
			gap(e).Round(time.Millisecond), rel))
	}
	return out
}
