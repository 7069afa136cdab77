package report

import (
	"strings"
	"testing"
	"time"
)

func TestParseWindowSpec(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 48, 0, 0, time.UTC)
	day := func(s string) time.Time {
		t, err := ParseTime(s)
		if err != nil {
			panic(err)
		}
		return t
	}
	tests := []struct {
		name                 string
		window, since, until string
		want                 Window
	}{
		{"default", "", "", "", Window{now.Add(-7 * 24 * time.Hour), now}},
		{"days", "7d", "", "", Window{now.AddDate(0, 0, -7), now}},
		{"hours", "24h", "", "", Window{now.Add(-24 * time.Hour), now}},
		{"weeks", "2w", "", "", Window{now.AddDate(0, 0, -14), now}},
		{"period before until", "1d", "", "2026-12-01", Window{day("2026-11-30"), day("2026-12-01")}},
		{"today", "today", "", "", Window{day("2026-12-07"), now}},
		{"yesterday", "yesterday", "", "", Window{day("2026-12-06"), day("2026-12-07")}},
		{"this month", "thismonth", "", "", Window{day("2026-12-01"), now}},
		{"last month", "lastmonth", "", "", Window{day("2026-11-01"), day("2026-12-01")}},
		{"since alone", "", "2026-12-01", "", Window{day("2026-12-01"), now}},
		{"since and until", "", "2026-11-30T09:00:00Z", "2026-11-30T12:00:00Z", Window{day("2026-11-30T09:00"), day("2026-11-30T12:00")}},
		{"since with an offset", "", "2026-11-30T10:00:00+01:00", "2026-11-30T12:00:00Z", Window{day("2026-11-30T09:00"), day("2026-11-30T12:00")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseWindowSpec(tt.window, tt.since, tt.until, now)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Since.Equal(tt.want.Since) || !got.Until.Equal(tt.want.Until) {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestParseWindowSpecLastMonthInJanuary(t *testing.T) {
	got, err := ParseWindowSpec("lastmonth", "", "", time.Date(2027, 1, 3, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != "2026-12-01T00:00:00Z to 2027-01-01T00:00:00Z" {
		t.Errorf("got %s", got)
	}
}

func TestParseWindowSpecRefusesMalformed(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 48, 0, 0, time.UTC)
	tests := []struct{ name, window, since, until, want string }{
		{"window and since", "7d", "2026-12-01", "", "window=7d and since=2026-12-01 both given"},
		{"unknown name", "lastweek", "", "", `window=: "lastweek" is not a period`},
		{"negative period", "-3d", "", "", `window=: "-3d" is not a period`},
		{"zero period", "0h", "", "", `window=: "0h" is not a period`},
		{"unit alone", "d", "", "", "window=:"},
		{"bad since", "", "last tuesday", "", `since=: "last tuesday" is not a time`},
		{"bad until", "", "2026-12-01", "soon", `until=: "soon" is not a time`},
		{"bad until with a period", "7d", "", "2026-13-01", "until=:"},
		{"named window and until", "yesterday", "", "2026-12-01", "window=yesterday and until=2026-12-01 both given"},
		{"since after until", "", "2026-12-02", "2026-12-01", "is empty: since= must be before until="},
		{"since in the future", "", "2026-12-08", "", "is empty"},
		{"today at midnight", "today", "", "", "is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := now
			if tt.name == "today at midnight" {
				n = now.Truncate(24 * time.Hour)
			}
			_, err := ParseWindowSpec(tt.window, tt.since, tt.until, n)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseWindowSpec(%q, %q, %q) = %v, want an error containing %q", tt.window, tt.since, tt.until, err, tt.want)
			}
		})
	}
}

// FuzzParseWindowSpec: an accepted window is never empty, a named or period window never ends
// after now, and an error names the query parameter at fault.
func FuzzParseWindowSpec(f *testing.F) {
	for _, s := range [][3]string{{"", "", ""}, {"7d", "", ""}, {"today", "", ""}, {"lastmonth", "", ""},
		{"", "2026-11-01", "2026-11-30T09:00"}, {"1w", "", "2026-11-30"}, {"x", "y", "z"}, {"-3h", "", ""}} {
		f.Add(s[0], s[1], s[2])
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, window, since, until string) {
		w, err := ParseWindowSpec(window, since, until, now)
		if err != nil {
			msg := err.Error()
			if !strings.Contains(msg, "window=") && !strings.Contains(msg, "since=") && !strings.Contains(msg, "until=") {
				t.Errorf("error %q names no query parameter", msg)
			}
			return
		}
		if !w.Until.After(w.Since) {
			t.Errorf("empty window %v accepted", w)
		}
		if until == "" && w.Until.After(now) {
			t.Errorf("window %v ends after now", w)
		}
	})
}
