package placement_test

import (
	"fmt"
	"github.com/bursar-dev/bursar/internal/placement"
	"os"
	"strconv"
	"testing"
)

// TestTraceDebug prints one window tick by tick (BURSAR_TRACE_DEBUG=case:offset).
func TestTraceDebug(t *testing.T) {
	spec := os.Getenv("BURSAR_TRACE_DEBUG")
	if spec == "" {
		t.Skip("set BURSAR_TRACE_DEBUG=caseIndex:windowIndex")
	}
	ci, _ := strconv.Atoi(spec[:1])
	wi, _ := strconv.Atoi(spec[2:])
	c := simCases(t)[ci]
	tr := loadTrace(t, c.dir, c.binary)
	offs := c.offsets
	if offs == nil {
		offs = evenOffsets(tr.length())
	}
	off := offs[wi]
	pol := &plannerPolicy{}
	w := &simWorld{tr: tr, off: off, history: make([][]placement.Observation, len(tr.zones))}
	for tick := range simWindow {
		pol.step(w, tick)
		w.clamp(tick)
		s, o := 0, 0
		if tick >= simCold {
			s, o = w.readyAt(tick)
		}
		caps := []int{}
		for z := range tr.zones {
			caps = append(caps, tr.caps[z][off+tick])
		}
		mark := ""
		if tick >= simCold && s+o < simTarget {
			mark = "DOWN"
		}
		acts := ""
		for _, a := range pol.last.Actions {
			acts += fmt.Sprintf(" %s:%s:%d:%s", a.Kind, a.Offer[:min(len(a.Offer), 10)], a.Count, a.Reason)
		}
		t.Logf("t=%4d caps=%v held=%v ready=%d+%d %s%s", tick, caps, w.counts[tick], s, o, mark, acts)
	}
}
