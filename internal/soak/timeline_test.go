package soak

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/arbiter"
)

// TestNoteReadyGathersSpells: ticks short of the target join into spells, each with its first
// tick's market time and the fewest replicas ready in it; a tick at the target ends a spell.
func TestNoteReadyGathersSpells(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		ready []int // by tick, target 3
		want  []spell
	}{
		{"always at target", []int{3, 4, 3}, nil},
		{"one spell", []int{3, 2, 0, 1, 3}, []spell{{from: 1, to: 4, at: t0.Add(tickLength), least: 0}}},
		{"two spells", []int{2, 3, 1, 1}, []spell{{from: 0, to: 1, at: t0, least: 2}, {from: 2, to: 4, at: t0.Add(2 * tickLength), least: 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s runStats
			for tick, n := range tc.ready {
				s.noteReady(tick, t0.Add(time.Duration(tick)*tickLength), n, 3)
			}
			if !reflect.DeepEqual(s.down, tc.want) {
				t.Errorf("spells = %+v, want %+v", s.down, tc.want)
			}
		})
	}
}

// TestReportShowsTimelinesOfBothRuns: the report lists each run's spells short of the target and
// its holds in the order they were made, with when each was asked and decided.
func TestReportShowsTimelinesOfBothRuns(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	h := arbiter.Hold{ID: "0123456789abcdef", AskedAt: t0}
	calm := &runStats{down: []spell{{from: 0, to: 24, at: t0, least: 0}},
		holdLines: holdLines(map[string]arbiter.Hold{h.ID: h}, map[string]ask{h.ID: {messages: 1, choice: reject, first: t0, clickAt: t0.Add(18 * time.Minute)}})}
	faulted := &runStats{faults: true}
	md := (&Summary{Calm: calm, Faulted: faulted}).Markdown()
	for _, want := range []string{
		"## Short of the target, without faults (24 ticks in 1 spells)",
		"| 0–23 | 01-01 00:00:00 | 12m0s | 0 |",
		"## Short of the target, with faults (0 ticks in 0 spells)",
		"| 01234567 | 01-01 00:00:00 | 01-01 00:00:00 | 1 | reject | 01-01 00:18:00 | none |",
		"## Holds, with faults",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}
