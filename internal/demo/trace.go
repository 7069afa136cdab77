package demo

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Step is one point of a step function: from At on (an offset from the trace's start), Count
// instances were held.
type Step struct {
	At    time.Duration
	Count int
}

// ErrBadTrace marks a trace line that cannot be read.
var ErrBadTrace = errors.New("malformed trace")

// maxTraceLines bounds what a converter reads, so a hostile file cannot exhaust memory.
const maxTraceLines = 1 << 20

// ParseEventTrace reads a Bamboo/SpotServe event trace, lines `t_ms,add|remove,nodeN`, into the
// number of nodes held over time. Lines are in time order in the published files; they are
// sorted anyway (stably) so the count never depends on the order of equal times.
func ParseEventTrace(r io.Reader, name string) ([]Step, error) {
	type event struct {
		at    time.Duration
		delta int
	}
	var evs []event
	err := eachLine(r, func(n int, line string) error {
		f := strings.Split(line, ",")
		if len(f) != 3 {
			return fmt.Errorf("%w: %s:%d: want t_ms,add|remove,node, got %q", ErrBadTrace, name, n, line)
		}
		ms, err := strconv.ParseInt(strings.TrimSpace(f[0]), 10, 64)
		if err != nil || ms < 0 || ms > int64(366*24*time.Hour/time.Millisecond) {
			return fmt.Errorf("%w: %s:%d: time %q is not milliseconds within a year", ErrBadTrace, name, n, f[0])
		}
		d := map[string]int{"add": 1, "remove": -1}[strings.TrimSpace(f[1])]
		if d == 0 {
			return fmt.Errorf("%w: %s:%d: event %q is neither add nor remove", ErrBadTrace, name, n, f[1])
		}
		evs = append(evs, event{at: time.Duration(ms) * time.Millisecond, delta: d})
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(evs, func(a, b event) int { return int(a.at - b.at) })
	steps := []Step{{At: 0, Count: 0}}
	count := 0
	for _, e := range evs {
		count = max(count+e.delta, 0)
		if last := &steps[len(steps)-1]; last.At == e.at {
			last.Count = count
		} else {
			steps = append(steps, Step{At: e.at, Count: count})
		}
	}
	return steps, nil
}

// ParseCountTrace reads Bamboo's GCP traces, lines `YYYY-MM-DD, HH:MM:SS, n_instances`. The
// published files repeat each observation at +1 and +2 minutes (for plotting), so a new count
// can start before the previous one's repeats end: a count takes effect at the first line that
// shows it, and repeats of the same count are ignored.
func ParseCountTrace(r io.Reader, name string) ([]Step, error) {
	type point struct {
		at    time.Time
		count int
	}
	var pts []point
	err := eachLine(r, func(n int, line string) error {
		f := strings.Split(line, ",")
		if len(f) != 3 {
			return fmt.Errorf("%w: %s:%d: want date, time, count, got %q", ErrBadTrace, name, n, line)
		}
		at, err := time.Parse("2006-01-02 15:04:05", strings.TrimSpace(f[0])+" "+strings.TrimSpace(f[1]))
		if err != nil {
			return fmt.Errorf("%w: %s:%d: date and time %q: want YYYY-MM-DD, HH:MM:SS", ErrBadTrace, name, n, f[0]+","+f[1])
		}
		c, err := strconv.Atoi(strings.TrimSpace(f[2]))
		if err != nil || c < 0 || c > math.MaxInt32/2 {
			return fmt.Errorf("%w: %s:%d: count %q is not a non-negative whole number", ErrBadTrace, name, n, f[2])
		}
		if len(pts) == 0 || pts[len(pts)-1].count != c {
			pts = append(pts, point{at: at, count: c})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(pts) == 0 {
		return nil, fmt.Errorf("%w: %s holds no observations", ErrBadTrace, name)
	}
	start := pts[0].at
	for _, p := range pts {
		start = minTime(start, p.at)
	}
	slices.SortStableFunc(pts, func(a, b point) int { return a.at.Compare(b.at) })
	steps := make([]Step, 0, len(pts))
	for _, p := range pts {
		steps = append(steps, Step{At: p.at.Sub(start), Count: p.count})
	}
	return steps, nil
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// eachLine calls fn on every non-empty line, numbered from 1.
func eachLine(r io.Reader, fn func(n int, line string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<16)
	n := 0
	for sc.Scan() {
		n++
		if n > maxTraceLines {
			return fmt.Errorf("%w: more than %d lines", ErrBadTrace, maxTraceLines)
		}
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if err := fn(n, line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%w: %v", ErrBadTrace, err)
	}
	return nil
}

// Sample reads a step function every gap from its start until its last step, inclusive: the
// count in force at each tick.
func Sample(steps []Step, gap time.Duration) []int {
	if len(steps) == 0 || gap <= 0 {
		return nil
	}
	end := steps[len(steps)-1].At
	out := make([]int, 0, int(end/gap)+1)
	i := 0
	for t := time.Duration(0); t <= end; t += gap {
		for i+1 < len(steps) && steps[i+1].At <= t {
			i++
		}
		c := 0
		if steps[i].At <= t {
			c = steps[i].Count
		}
		out = append(out, c)
	}
	return out
}

// Scale maps a trace's counts onto a fleet's share of the zone: at the trace's peak the fleet may
// hold share instances, and proportionally fewer (rounded down) as the zone's count falls. A
// trace that was a big cluster's view of a zone becomes a small fleet's capacity there.
func Scale(counts []int, share int) []int {
	peak := slices.Max(counts)
	out := make([]int, len(counts))
	if peak == 0 {
		return out
	}
	for i, c := range counts {
		out[i] = c * share / peak
	}
	return out
}

// ZoneJSON writes counts in the per-zone trace format the replay reads
// ({"metadata":{"gap_seconds":N},"data":[...]}), one line, newline-terminated.
func ZoneJSON(counts []int, gap time.Duration) ([]byte, error) {
	if gap < time.Second || gap%time.Second != 0 {
		return nil, fmt.Errorf("gap %v must be a whole number of seconds", gap)
	}
	v := struct {
		Metadata struct {
			GapSeconds int `json:"gap_seconds"`
		} `json:"metadata"`
		Data []int `json:"data"`
	}{Data: counts}
	v.Metadata.GapSeconds = int(gap / time.Second)
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
