// Package replay replays recorded spot-capacity traces through placement policies under the
// rules of the SkyServe (EuroSys'25) simulation, so that Bursar's planner, SpotHedge, simple
// baselines and a hindsight optimum are compared on equal terms. The rules are written down in
// ../shared/REPLAY.md; this package is their single implementation.
package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"sort"
	"strings"
)

// Unlimited is the capacity a zone has at a tick where a binary trace says "available": far more
// than any policy asks for, small enough that sums of it never overflow.
const Unlimited = math.MaxInt32

// Zone is one zone's spot capacity, expanded to one value per tick.
type Zone struct {
	// Name is the trace file's name without ".json", e.g. "us-east-2a_v100_1".
	Name string
	// Capacity[t] is how many spot instances the service can hold in the zone during tick t.
	Capacity []int
}

// Trace is a folder of zones read on one tick grid. Its length is the shortest zone's, so every
// zone has a value at every tick of the trace.
type Trace struct {
	Name  string
	Zones []Zone
	// Len is the number of ticks every zone covers.
	Len int
}

// LoadOptions say how a trace folder is read.
type LoadOptions struct {
	// TickSeconds is the simulation tick; every file's gap_seconds must be a multiple of it.
	TickSeconds int
	// Binary reads 0/1 values as "none" / "unlimited", as the peer does for availability traces.
	Binary bool
}

// LoadTrace reads every *.json file directly in dir (sub-folders and other files are ignored), in
// name order, as one zone each.
func LoadTrace(fsys fs.FS, dir string, opts LoadOptions) (*Trace, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("reading trace folder %s: %w", dir, err)
	}
	tr := &Trace{Name: path.Base(dir)}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		file := path.Join(dir, e.Name())
		data, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, fmt.Errorf("reading trace file %s: %w", file, err)
		}
		z, err := ParseZone(strings.TrimSuffix(e.Name(), ".json"), data, opts)
		if err != nil {
			return nil, fmt.Errorf("trace file %s: %w", file, err)
		}
		tr.Zones = append(tr.Zones, z)
	}
	if len(tr.Zones) == 0 {
		return nil, fmt.Errorf("trace folder %s holds no .json zone files: give a folder with one "+
			`{"metadata":{"gap_seconds":N},"data":[...]} file per zone`, dir)
	}
	sort.Slice(tr.Zones, func(i, j int) bool { return tr.Zones[i].Name < tr.Zones[j].Name })
	tr.Len = len(tr.Zones[0].Capacity)
	for _, z := range tr.Zones[1:] {
		tr.Len = min(tr.Len, len(z.Capacity))
	}
	return tr, nil
}

// zoneFile is the on-disk shape of one zone. Prices, present in some cant-be-late files, are
// checked for shape but not used: the replay's cost model is in units of one spot instance.
type zoneFile struct {
	Metadata *struct {
		GapSeconds json.RawMessage `json:"gap_seconds"`
	} `json:"metadata"`
	Data   *[]json.RawMessage `json:"data"`
	Prices *[]json.RawMessage `json:"prices"`
}

// number reads a raw JSON value as a number; strings, even of digits, are not numbers here.
func number(raw json.RawMessage) (json.Number, bool) {
	s := string(bytes.TrimSpace(raw))
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return "", false
	}
	return json.Number(s), true
}

// ErrMalformedTrace marks a zone file that is not a valid trace.
var ErrMalformedTrace = errors.New("malformed trace")

// maxTicks bounds a zone's expanded length (over three years of 30 s ticks) so that a hostile
// file cannot ask for an absurd expansion.
const maxTicks = 1 << 22

// ParseZone decodes one zone file and expands it to ticks: each sample is repeated
// gap_seconds/TickSeconds times.
func ParseZone(name string, data []byte, opts LoadOptions) (Zone, error) {
	if opts.TickSeconds <= 0 {
		return Zone{}, fmt.Errorf("tick must be positive, got %d s", opts.TickSeconds)
	}
	f, gap, err := decodeZone(data)
	if err != nil {
		return Zone{}, err
	}
	if gap%opts.TickSeconds != 0 {
		return Zone{}, fmt.Errorf("%w: gap_seconds %d is not a multiple of the %d s tick: "+
			"pass a --tick that divides it (e.g. --tick %ds)", ErrMalformedTrace, gap, opts.TickSeconds, gap)
	}
	samples, err := capacities(f, opts.Binary)
	if err != nil {
		return Zone{}, err
	}
	repeat := gap / opts.TickSeconds
	if len(samples) > maxTicks/repeat {
		return Zone{}, fmt.Errorf("%w: %d samples of %d ticks each exceed the %d-tick limit", ErrMalformedTrace, len(samples), repeat, maxTicks)
	}
	z := Zone{Name: name, Capacity: make([]int, 0, len(samples)*repeat)}
	for _, c := range samples {
		for range repeat {
			z.Capacity = append(z.Capacity, c)
		}
	}
	return z, nil
}

// ParseZoneSamples decodes one zone file without expanding it: one value per sample and the
// file's gap_seconds. The job replay (internal/jobreplay) runs each file on its own tick.
func ParseZoneSamples(data []byte, binary bool) (samples []int, gapSeconds int, err error) {
	f, gap, err := decodeZone(data)
	if err != nil {
		return nil, 0, err
	}
	samples, err = capacities(f, binary)
	return samples, gap, err
}

// decodeZone reads the JSON of one zone file and its gap_seconds.
func decodeZone(data []byte) (zoneFile, int, error) {
	var f zoneFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return f, 0, fmt.Errorf("%w: %v (want {\"metadata\":{\"gap_seconds\":N},\"data\":[...]})", ErrMalformedTrace, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return f, 0, fmt.Errorf("%w: extra data after the JSON object", ErrMalformedTrace)
	}
	gap, err := gapSeconds(f)
	return f, gap, err
}

func gapSeconds(f zoneFile) (int, error) {
	if f.Metadata == nil || f.Metadata.GapSeconds == nil {
		return 0, fmt.Errorf("%w: metadata.gap_seconds is missing", ErrMalformedTrace)
	}
	n, ok := number(f.Metadata.GapSeconds)
	gap, err := n.Int64()
	if !ok || err != nil || gap <= 0 || gap > 366*24*3600 {
		return 0, fmt.Errorf("%w: metadata.gap_seconds %s is not a positive whole number of seconds", ErrMalformedTrace, f.Metadata.GapSeconds)
	}
	return int(gap), nil
}

// capacities checks data (and prices, where present) and returns the per-sample capacity.
func capacities(f zoneFile, binary bool) ([]int, error) {
	if f.Data == nil || len(*f.Data) == 0 {
		return nil, fmt.Errorf("%w: data is missing or empty", ErrMalformedTrace)
	}
	out := make([]int, len(*f.Data))
	for i, raw := range *f.Data {
		n, ok := number(raw)
		v, err := n.Int64()
		if !ok || err != nil || v < 0 || v > math.MaxInt32/2 {
			return nil, fmt.Errorf("%w: data[%d] = %s is not a non-negative whole count", ErrMalformedTrace, i, raw)
		}
		switch {
		case !binary:
			out[i] = int(v)
		case v == 0:
			out[i] = 0
		case v == 1:
			out[i] = Unlimited
		default:
			return nil, fmt.Errorf("%w: data[%d] = %d but --binary-capacity wants only 0 or 1: drop the flag for count traces", ErrMalformedTrace, i, v)
		}
	}
	if f.Prices != nil {
		if len(*f.Prices) != len(*f.Data) {
			return nil, fmt.Errorf("%w: prices has %d values but data has %d", ErrMalformedTrace, len(*f.Prices), len(*f.Data))
		}
		for i, raw := range *f.Prices {
			p, ok := number(raw)
			if v, err := p.Float64(); !ok || err != nil || v < 0 || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: prices[%d] = %s is not a non-negative price", ErrMalformedTrace, i, raw)
			}
		}
	}
	return out, nil
}
