package jobreplay

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/bursar-dev/bursar/internal/replay"
)

// Market is where a job may run: one or more zones of spot on one tick grid, plus on-demand.
type Market struct {
	Name  string
	Zones []string
	Tick  int64 // g, seconds
	// Avail[k][z] says spot can be had in zone z during tick k (a trace value >= 1).
	Avail [][]bool
}

// Len is the number of ticks the market covers.
func (m *Market) Len() int { return len(m.Avail) }

// LoadMarkets reads every *.json trace file directly in dir, in name order, as one single-zone
// market each, on the file's own gap_seconds. It reuses the serving replay's zone-file reader.
func LoadMarkets(fsys fs.FS, dir string) ([]Market, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("reading trace folder %s: %w", dir, err)
	}
	var out []Market
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		file := path.Join(dir, e.Name())
		data, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, fmt.Errorf("reading trace file %s: %w", file, err)
		}
		m, err := ParseMarket(strings.TrimSuffix(e.Name(), ".json"), data)
		if err != nil {
			return nil, fmt.Errorf("trace file %s: %w", file, err)
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("trace folder %s holds no .json trace files: give a folder with one "+
			`{"metadata":{"gap_seconds":N},"data":[...]} file per zone`, dir)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ParseMarket decodes one trace file as a single-zone market.
func ParseMarket(name string, data []byte) (Market, error) {
	samples, gap, err := replay.ParseZoneSamples(data, false)
	if err != nil {
		return Market{}, err
	}
	m := Market{Name: name, Zones: []string{name}, Tick: int64(gap), Avail: make([][]bool, len(samples))}
	flat := make([]bool, len(samples))
	for k, v := range samples {
		flat[k] = v >= 1
		m.Avail[k] = flat[k : k+1 : k+1]
	}
	return m, nil
}

// Join makes one market of several single-zone markets on the same tick, aligned by index and cut
// to the shortest: the same job allowed in every zone, each zone with its own availability.
func Join(name string, ms []Market) (Market, error) {
	if len(ms) == 0 {
		return Market{}, fmt.Errorf("no zones to join")
	}
	out := Market{Name: name, Tick: ms[0].Tick, Avail: make([][]bool, ms[0].Len())}
	for _, m := range ms {
		if m.Tick != out.Tick {
			return Market{}, fmt.Errorf("zone %s has %d s ticks but %s has %d s: --zones all needs one tick for every file",
				m.Name, m.Tick, ms[0].Name, out.Tick)
		}
		out.Zones = append(out.Zones, m.Zones...)
		out.Avail = out.Avail[:min(len(out.Avail), m.Len())]
	}
	for k := range out.Avail {
		row := make([]bool, 0, len(out.Zones))
		for _, m := range ms {
			row = append(row, m.Avail[k]...)
		}
		out.Avail[k] = row
	}
	return out, nil
}

// windowSpan is the length every window has: 70 h plus a 22.33 h margin, since the job may run
// past its deadline and the reference reads beyond the last tick.
const windowSpan = 92*3600 + 33*36

// WindowLen is need = ceil(92.33 h / g) ticks.
func WindowLen(tick int64) int { return int(ceilDiv(windowSpan, tick)) }

// WindowStarts returns the windows' first ticks in a trace of n ticks: round(j·last/(count−1))
// for j = 0 … count−1 with last = n − need, rounded half to even as Python does, duplicates
// dropped. A trace shorter than one window has none.
func WindowStarts(n int, tick int64, count int) []int {
	last := n - WindowLen(tick)
	if last < 0 || count < 1 {
		return nil
	}
	if count == 1 {
		return []int{0}
	}
	var out []int
	for j := range count {
		s := roundHalfEven(int64(j)*int64(last), int64(count-1))
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}

// roundHalfEven is round(a/b) for a >= 0, b > 0, ties to even, computed exactly.
func roundHalfEven(a, b int64) int {
	q, r := a/b, a%b
	if 2*r > b || (2*r == b && q%2 == 1) {
		q++
	}
	return int(q)
}
