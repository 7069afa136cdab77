package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Window is the stretch of time a report covers: [Since, Until).
type Window struct {
	Since, Until time.Time
}

// Hours is the window's length in hours.
func (w Window) Hours() float64 { return w.Until.Sub(w.Since).Hours() }

func (w Window) String() string {
	return w.Since.UTC().Format(time.RFC3339) + " to " + w.Until.UTC().Format(time.RFC3339)
}

// DefaultPeriod is the window a report covers when given none: the last week.
const DefaultPeriod = "7d"

// ParseWindow reads --since, --until and --period. --until defaults to now; --since defaults to
// --until minus --period (default DefaultPeriod). Giving --since and --period together is an
// error, since they may disagree.
func ParseWindow(since, until, period string, now time.Time) (Window, error) {
	w := Window{Until: now.UTC()}
	var err error
	if until != "" {
		if w.Until, err = ParseTime(until); err != nil {
			return Window{}, fmt.Errorf("--until: %w", err)
		}
	}
	switch {
	case since != "" && period != "":
		return Window{}, fmt.Errorf("--since %q and --period %q both given: give one", since, period)
	case since != "":
		if w.Since, err = ParseTime(since); err != nil {
			return Window{}, fmt.Errorf("--since: %w", err)
		}
	default:
		if period == "" {
			period = DefaultPeriod
		}
		d, err := ParsePeriod(period)
		if err != nil {
			return Window{}, fmt.Errorf("--period: %w", err)
		}
		w.Since = w.Until.Add(-d)
	}
	if !w.Until.After(w.Since) {
		return Window{}, fmt.Errorf("the window %s is empty: --since must be before --until", w)
	}
	return w, nil
}

// ParseTime reads RFC 3339 ("2026-11-30T09:00:00Z"), a date ("2026-11-30", midnight UTC) or a
// date and minutes ("2026-11-30T09:00", UTC).
func ParseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time: want RFC 3339 (2026-11-30T09:00:00Z) or a date (2026-11-30)", s)
}

// ParsePeriod reads a length of time: "36h", "7d", "2w", or anything time.ParseDuration reads.
func ParsePeriod(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	bad := fmt.Errorf("%q is not a period: want a positive length like 24h, 7d or 2w", s)
	if len(s) < 2 {
		return 0, bad
	}
	unit := map[byte]time.Duration{'d': 24 * time.Hour, 'w': 7 * 24 * time.Hour}[s[len(s)-1]]
	var d time.Duration
	if unit != 0 {
		n, err := strconv.Atoi(s[:len(s)-1])
		if err != nil || n <= 0 || n > 100*366 {
			return 0, bad
		}
		d = time.Duration(n) * unit
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, bad
		}
	}
	if d <= 0 {
		return 0, bad
	}
	return d, nil
}

// ParseMonth reads "2026-11" as the window of that calendar month in UTC.
func ParseMonth(s string) (Window, error) {
	t, err := time.Parse("2006-01", strings.TrimSpace(s))
	if err != nil {
		return Window{}, fmt.Errorf("--month %q: want a month like 2026-11", s)
	}
	return Window{Since: t.UTC(), Until: t.AddDate(0, 1, 0).UTC()}, nil
}

// NamedWindows are the windows the API takes by name in window=, beside periods like 7d.
var NamedWindows = []string{"today", "yesterday", "thismonth", "lastmonth"}

// ParseWindowSpec reads a window as the HTTP API names it: window= is a period ("7d", "24h",
// "2w") ending at until= (default now), or a named window (today, yesterday, thismonth,
// lastmonth: calendar days and months in UTC); or window= is empty and since= (RFC 3339 or a
// date) starts it, until= ending it (default now). With neither, the window is the last
// DefaultPeriod. Errors name the query parameter, since that is what the caller typed.
func ParseWindowSpec(window, since, until string, now time.Time) (Window, error) {
	window = strings.TrimSpace(window)
	now = now.UTC()
	if window != "" && since != "" {
		return Window{}, fmt.Errorf("window=%s and since=%s both given: give one", window, since)
	}
	end := now
	if until != "" {
		var err error
		if end, err = ParseTime(until); err != nil {
			return Window{}, fmt.Errorf("until=: %w", err)
		}
	}
	var w Window
	switch {
	case slices.Contains(NamedWindows, window):
		if until != "" {
			return Window{}, fmt.Errorf("window=%s and until=%s both given: a named window has its own end; give a period (window=7d) with until=", window, until)
		}
		w = namedWindow(window, now)
	case since != "":
		t, err := ParseTime(since)
		if err != nil {
			return Window{}, fmt.Errorf("since=: %w", err)
		}
		w = Window{Since: t, Until: end}
	default:
		if window == "" {
			window = DefaultPeriod
		}
		d, err := ParsePeriod(window)
		if err != nil {
			return Window{}, fmt.Errorf("window=: %w, or one of %s", err, strings.Join(NamedWindows, ", "))
		}
		w = Window{Since: end.Add(-d), Until: end}
	}
	if !w.Until.After(w.Since) {
		return Window{}, fmt.Errorf("the window %s is empty: since= must be before until=", w)
	}
	return w, nil
}

// namedWindow is one of NamedWindows at now: whole days and months in UTC, the current one up to
// now.
func namedWindow(name string, now time.Time) Window {
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	switch name {
	case "today":
		return Window{Since: midnight, Until: now}
	case "yesterday":
		return Window{Since: midnight.AddDate(0, 0, -1), Until: midnight}
	case "thismonth":
		return Window{Since: month, Until: now}
	}
	return Window{Since: month.AddDate(0, -1, 0), Until: month} // lastmonth
}

// hourFloor and hourCeil align a time to the hour.
func hourFloor(t time.Time) time.Time { return t.UTC().Truncate(time.Hour) }

func hourCeil(t time.Time) time.Time {
	f := hourFloor(t)
	if f.Equal(t) {
		return f
	}
	return f.Add(time.Hour)
}
