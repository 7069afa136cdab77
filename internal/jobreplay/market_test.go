package jobreplay

import (
	"errors"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/bursar-dev/bursar/internal/replay"
)

// TestWindowStarts checks JOBS.md's windows: need = ceil(92.33 h / g), starts round(j·last/(W−1))
// half to even, duplicates dropped, none when the trace is shorter than a window.
func TestWindowStarts(t *testing.T) {
	tests := []struct {
		name  string
		n     int
		tick  int64
		count int
		want  []int
	}{
		// 3895 ticks of 600 s: need 554, last 3341; j = 1: 3341/29 = 115.2 → 115.
		{"600 s folder", 3895, 600, 30, nil},
		{"shorter than a window", 553, 600, 30, nil},
		{"exactly one window", 554, 600, 30, []int{0}},
		// last = 2: 0, 2/3 → 1, 4/3 → 1 (dropped), 2.
		{"duplicates dropped", 556, 600, 4, []int{0, 1, 2}},
		// last = 1, count 3: 0, 0.5 → 0 (ties to even, dropped), 1.
		{"ties to even", 555, 600, 3, []int{0, 1}},
		// last = 3, count 3: 0, 1.5 → 2 (to even), 3.
		{"ties to even, up", 557, 600, 3, []int{0, 2, 3}},
		{"one window", 1000, 600, 1, []int{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := WindowStarts(tt.n, tt.tick, tt.count)
			if tt.name == "600 s folder" {
				if len(got) != 30 || got[1] != 115 || got[29] != 3341 {
					t.Errorf("WindowStarts() = %v, want 30 starts, [1] = 115, [29] = 3341", got)
				}
				return
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("WindowStarts() = %v, want %v", got, tt.want)
			}
		})
	}
	if got := WindowLen(32); got != 10388 {
		t.Errorf("WindowLen(32) = %d, want 10388", got)
	}
}

// TestParseMarket: values >= 1 are spot; a malformed file is refused with ErrMalformedTrace.
func TestParseMarket(t *testing.T) {
	m, err := ParseMarket("z", []byte(`{"metadata":{"gap_seconds":600},"data":[0,1,2,0]}`))
	if err != nil || m.Tick != 600 || m.Len() != 4 || m.Avail[1][0] != true || m.Avail[2][0] != true || m.Avail[3][0] {
		t.Fatalf("ParseMarket() = %+v, %v", m, err)
	}
	for _, bad := range []string{
		``, `{}`, `[]`, `{"metadata":{"gap_seconds":0},"data":[1]}`, `{"metadata":{"gap_seconds":60},"data":[]}`,
		`{"metadata":{"gap_seconds":60},"data":[-1]}`, `{"metadata":{"gap_seconds":60},"data":[0.5]}`,
		`{"metadata":{"gap_seconds":"60"},"data":[1]}`, `{"metadata":{"gap_seconds":60},"data":[1]} x`,
		`{"metadata":{"gap_seconds":60},"data":[1],"extra":1}`,
	} {
		if _, err := ParseMarket("z", []byte(bad)); !errors.Is(err, replay.ErrMalformedTrace) {
			t.Errorf("ParseMarket(%q) error = %v, want ErrMalformedTrace", bad, err)
		}
	}
}

// TestLoadMarkets: files in name order, other files ignored, an empty folder refused.
func TestLoadMarkets(t *testing.T) {
	fsys := fstest.MapFS{
		"t/b.json":   {Data: []byte(`{"metadata":{"gap_seconds":60},"data":[1,0]}`)},
		"t/a.json":   {Data: []byte(`{"metadata":{"gap_seconds":30},"data":[0]}`)},
		"t/notes.md": {Data: []byte(`not a trace`)},
		"e/x.txt":    {Data: []byte(`x`)},
		"bad/c.json": {Data: []byte(`{"data":[1]}`)},
	}
	ms, err := LoadMarkets(fsys, "t")
	if err != nil || len(ms) != 2 || ms[0].Name != "a" || ms[1].Tick != 60 {
		t.Errorf("LoadMarkets() = %+v, %v", ms, err)
	}
	for _, dir := range []string{"e", "bad", "missing"} {
		if _, err := LoadMarkets(fsys, dir); err == nil {
			t.Errorf("LoadMarkets(%s): no error", dir)
		}
	}
}

// FuzzParseMarket: any input is a market whose every tick has one zone, or an error.
func FuzzParseMarket(f *testing.F) {
	f.Add([]byte(`{"metadata":{"gap_seconds":600},"data":[0,1,2,0]}`))
	f.Add([]byte(`{"metadata":{"gap_seconds":32},"data":[1],"prices":[0.9]}`))
	f.Add([]byte(`{"metadata":{"gap_seconds":1e3},"data":[1]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseMarket("z", data)
		if err != nil {
			return
		}
		if m.Tick <= 0 || m.Len() == 0 {
			t.Fatalf("ParseMarket() = tick %d, %d ticks without an error", m.Tick, m.Len())
		}
		for k, row := range m.Avail {
			if len(row) != 1 {
				t.Fatalf("tick %d has %d zones", k, len(row))
			}
		}
	})
}
