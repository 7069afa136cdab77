package soak

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/arbiter"
)

// spell is a stretch of ticks with fewer ready replicas than the replay's target, as the
// market's actuator reported them after each round.
type spell struct {
	from, to int // ticks, to exclusive
	at       time.Time
	least    int // fewest ready replicas in it
}

// watchReady notes, after the round of tick t, whether the fleet had its target ready; spells
// short of it are the report's answer to where the availability went.
func (r *rig) watchReady(ctx context.Context, t int) {
	if t < 0 || r.act == nil {
		return
	}
	obs, err := r.act.Observe(ctx)
	if err != nil {
		return
	}
	ready := 0
	for _, o := range obs {
		ready += o.Ready
	}
	r.run.noteReady(t, r.now(), ready, r.env.Rules.Target)
}

// noteReady extends or opens a spell when ready is short of target at tick t.
func (s *runStats) noteReady(t int, at time.Time, ready, target int) {
	if ready >= target {
		return
	}
	if n := len(s.down); n > 0 && s.down[n-1].to == t {
		s.down[n-1].to = t + 1
		s.down[n-1].least = min(s.down[n-1].least, ready)
		return
	}
	s.down = append(s.down, spell{from: t, to: t + 1, at: at, least: ready})
}

// holdLine is one hold of a run as the report shows it: when the arbiter made it, when Slack
// first showed it, what the approver did and when, and what it held.
type holdLine struct {
	hold arbiter.Hold
	ask  ask
}

// holdLines are the run's holds in the order the arbiters made them.
func holdLines(holds map[string]arbiter.Hold, asks map[string]ask) []holdLine {
	out := make([]holdLine, 0, len(holds))
	for id, h := range holds {
		out = append(out, holdLine{hold: h, ask: asks[id]})
	}
	slices.SortFunc(out, func(a, b holdLine) int {
		return cmp.Or(a.hold.AskedAt.Compare(b.hold.AskedAt), cmp.Compare(a.hold.ID, b.hold.ID))
	})
	return out
}

// what says what a hold held: each action's kind, offer, delta and reason.
func (l holdLine) what() string {
	var parts []string
	for _, a := range l.hold.Plan.Actions {
		parts = append(parts, fmt.Sprintf("%s %+d %s (%s)", a.Kind, a.Delta, a.Offer, a.Reason))
	}
	return strings.Join(parts, "; ")
}

// writeTimelines writes both runs' spells short of the target and their holds, side by side in
// market time, so a gap between the runs can be traced to the holds (or faults) around it.
func (s *Summary) writeTimelines(b *strings.Builder) {
	for _, run := range []*runStats{s.Calm, s.Faulted} {
		down := 0
		for _, d := range run.down {
			down += d.to - d.from
		}
		fmt.Fprintf(b, "\n## Short of the target, %s (%d ticks in %d spells)\n\n| ticks | market time | length | fewest ready |\n| --- | --- | --- | --- |\n",
			run.name(), down, len(run.down))
		for _, d := range run.down {
			fmt.Fprintf(b, "| %d–%d | %s | %s | %d |\n", d.from, d.to-1, stamp(d.at),
				time.Duration(d.to-d.from)*tickLength, d.least)
		}
	}
	for _, run := range []*runStats{s.Calm, s.Faulted} {
		fmt.Fprintf(b, "\n## Holds, %s (market time)\n\n| hold | made | first asked | messages | approver | clicked | outcome | held |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n",
			run.name())
		for _, l := range run.holdLines {
			fmt.Fprintf(b, "| %.8s | %s | %s | %d | %s | %s | %s | %s |\n", l.hold.ID, stamp(l.hold.AskedAt),
				stamp(l.ask.first), l.ask.messages, l.choiceText(), stamp(l.ask.clickAt), cmp.Or(l.ask.outcome, "none"), l.what())
		}
	}
}

func (l holdLine) choiceText() string {
	if l.ask.messages == 0 {
		return "never asked"
	}
	return l.ask.choice.String()
}

// stamp writes a market time, or "–" for none.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.UTC().Format("01-02 15:04:05")
}
