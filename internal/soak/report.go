package soak

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Line is the soak's one-line summary.
func (s *Summary) Line() string {
	f := s.Faulted
	pub, rec, lost, dup := f.totals()
	return fmt.Sprintf("soak: market %s, events %s published / %s recorded (%d lost, %d duplicated), actions %d (%d doubled), "+
		"%s, leader changes %d, availability %.2f %% (no faults %.2f %%), cost %.2f %% of on-demand (no faults %.2f %%), peak RSS %.0f MB",
		hours(s.Market), thousands(pub), thousands(rec), lost, dup, f.actions, f.doubled, f.holds.line(), f.leaderChanges,
		f.result.AvailabilityPct, s.Calm.result.AvailabilityPct, f.result.CostPct, s.Calm.result.CostPct, s.PeakRSSMB)
}

// line is the holds' part of the summary: holds, then their actions by how they ended.
func (t holdTally) line() string {
	return fmt.Sprintf("holds %d (%d asked after a restore; %d actions: %d applied after approval, %d rejected, %d expired, %d pending at the end; "+
		"%d lost, %d applied unapproved, %d doubled)", t.holds, t.restored, t.actions, t.applied, t.rejected, t.expired, t.pendingN,
		t.lost+t.twice, t.unapproved, t.doubled)
}

// Markdown is the soak's report: the summary, the fault timeline, each table's counts and what
// broke.
func (s *Summary) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Soak report\n\n%s\n\n", s.Line())
	verdict := "every invariant held"
	if len(s.Broken) > 0 {
		verdict = fmt.Sprintf("%d invariants broken", len(s.Broken))
	}
	fmt.Fprintf(&b, "Result: **%s**. Wall time: %s without faults, %s with faults. Goroutines left after shutdown: %d.\n\n",
		verdict, s.Calm.wall.Round(time.Second), s.Faulted.wall.Round(time.Second), s.Leaked)
	b.WriteString("## Fault timeline (market time)\n\n| tick | market time | fault |\n| --- | --- | --- |\n")
	for _, e := range s.Faulted.timeline {
		fmt.Fprintf(&b, "| %d | %s | %s |\n", e.tick, e.at.UTC().Format(time.RFC3339), e.what)
	}
	b.WriteString("\n## Events per table\n\n| table | run | published | recorded (distinct ids) | rows |\n| --- | --- | --- | --- | --- |\n")
	for _, run := range []*runStats{s.Calm, s.Faulted} {
		names := make([]string, 0, len(run.tables))
		for n := range run.tables {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			t := run.tables[n]
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %d |\n", n, run.name(), t.published, t.recorded, t.rows)
		}
	}
	b.WriteString("\n## Approvals\n\n| run | holds |\n| --- | --- |\n")
	for _, run := range []*runStats{s.Calm, s.Faulted} {
		fmt.Fprintf(&b, "| %s | %s |\n", run.name(), run.holds.line())
	}
	fmt.Fprintf(&b, "\nSlack (with faults): %d messages posted, %d calls refused while it was down. Questions asked "+
		"(market time of the first message):\n\n| hold | first asked | deadline | messages | approver | outcome |\n| --- | --- | --- | --- | --- | --- |\n",
		s.Faulted.slackPosts, s.Faulted.slackRefused)
	for _, a := range s.Faulted.asks {
		fmt.Fprintf(&b, "| %.8s | %s | %s | %d | %s | %s |\n", a.hold, a.first.UTC().Format(time.RFC3339),
			a.deadline.UTC().Format(time.RFC3339), a.messages, a.choice, cmp.Or(a.outcome, "none"))
	}
	s.writeTimelines(&b)
	fmt.Fprintf(&b, "\nCollector load: %d events acked (%d failed for good); store inserts refused during its outage: %d; DLQ: %d.\n",
		s.Faulted.loadAcked, s.Faulted.loadFailed, s.Faulted.refused, s.Faulted.dead)
	if n := s.Faulted.streamLost; n > 0 {
		fmt.Fprintf(&b, "\nThe TELEMETRY stream no longer holds %d events the bus acknowledged to the collector "+
			"(a damaged replica came back short); they are counted as published above.\n", n)
	}
	for _, x := range s.Faulted.busLosses {
		fmt.Fprintf(&b, "\nThe collector's publisher was told: %s.\n", x)
	}
	if len(s.Broken) > 0 {
		b.WriteString("\n## Broken invariants\n\n")
		for _, x := range s.Broken {
			fmt.Fprintf(&b, "- %s\n", x)
		}
	}
	return b.String()
}

func hours(d time.Duration) string { return fmt.Sprintf("%gh", d.Hours()) }

// thousands writes n with commas: 1,204,331.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
