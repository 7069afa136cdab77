package replay

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func TestParseZone(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		tick    int
		binary  bool
		want    []int
		wantErr string
	}{
		{name: "expands each sample gap/tick times", data: `{"metadata":{"gap_seconds":90},"data":[1,0]}`, tick: 30, want: []int{1, 1, 1, 0, 0, 0}},
		{name: "gap equal to tick", data: `{"metadata":{"gap_seconds":30},"data":[4,3]}`, tick: 30, want: []int{4, 3}},
		{name: "binary one is unlimited", data: `{"metadata":{"gap_seconds":30},"data":[1,0]}`, tick: 30, binary: true, want: []int{Unlimited, 0}},
		{name: "prices of the same length are accepted", data: `{"metadata":{"gap_seconds":30},"data":[1],"prices":[0.918]}`, tick: 30, want: []int{1}},
		{name: "gap not a multiple of the tick", data: `{"metadata":{"gap_seconds":32},"data":[1]}`, tick: 30, wantErr: "not a multiple of the 30 s tick"},
		{name: "missing metadata", data: `{"data":[1]}`, tick: 30, wantErr: "metadata.gap_seconds is missing"},
		{name: "missing gap", data: `{"metadata":{},"data":[1]}`, tick: 30, wantErr: "metadata.gap_seconds is missing"},
		{name: "zero gap", data: `{"metadata":{"gap_seconds":0},"data":[1]}`, tick: 30, wantErr: "not a positive whole number"},
		{name: "fractional gap", data: `{"metadata":{"gap_seconds":30.5},"data":[1]}`, tick: 30, wantErr: "not a positive whole number"},
		{name: "missing data", data: `{"metadata":{"gap_seconds":30}}`, tick: 30, wantErr: "data is missing or empty"},
		{name: "empty data", data: `{"metadata":{"gap_seconds":30},"data":[]}`, tick: 30, wantErr: "data is missing or empty"},
		{name: "negative count", data: `{"metadata":{"gap_seconds":30},"data":[1,-1]}`, tick: 30, wantErr: "data[1] = -1"},
		{name: "fractional count", data: `{"metadata":{"gap_seconds":30},"data":[0.5]}`, tick: 30, wantErr: "data[0] = 0.5"},
		{name: "string count", data: `{"metadata":{"gap_seconds":30},"data":["1"]}`, tick: 30, wantErr: "malformed trace"},
		{name: "binary value above one", data: `{"metadata":{"gap_seconds":30},"data":[0,2]}`, tick: 30, binary: true, wantErr: "data[1] = 2 but --binary-capacity"},
		{name: "unknown field", data: `{"metadata":{"gap_seconds":30},"data":[1],"zone":"x"}`, tick: 30, wantErr: `unknown field "zone"`},
		{name: "prices of another length", data: `{"metadata":{"gap_seconds":30},"data":[1,1],"prices":[1]}`, tick: 30, wantErr: "prices has 1 values but data has 2"},
		{name: "negative price", data: `{"metadata":{"gap_seconds":30},"data":[1],"prices":[-1]}`, tick: 30, wantErr: "prices[0] = -1"},
		{name: "trailing data", data: `{"metadata":{"gap_seconds":30},"data":[1]} {}`, tick: 30, wantErr: "extra data"},
		{name: "not JSON", data: `gap_seconds=30`, tick: 30, wantErr: "malformed trace"},
		{name: "not an object", data: `[1,2]`, tick: 30, wantErr: "malformed trace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			z, err := ParseZone("z", []byte(tt.data), LoadOptions{TickSeconds: tt.tick, Binary: tt.binary})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseZone() error = %v, want one containing %q", err, tt.wantErr)
				}
				if !errors.Is(err, ErrMalformedTrace) && !strings.Contains(err.Error(), "tick") {
					t.Errorf("error %v is not ErrMalformedTrace", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseZone() error = %v", err)
			}
			if !slices.Equal(z.Capacity, tt.want) {
				t.Errorf("capacity = %v, want %v", z.Capacity, tt.want)
			}
		})
	}
}

func TestLoadTrace(t *testing.T) {
	tr, err := LoadTrace(os.DirFS("testdata"), "tiny", LoadOptions{TickSeconds: 30})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Name != "tiny" || len(tr.Zones) != 2 || tr.Zones[0].Name != "a" || tr.Zones[1].Name != "b" {
		t.Fatalf("trace = %+v, want zones a, b named tiny", tr)
	}
	if tr.Len != 6 {
		t.Errorf("Len = %d, want the shortest zone's 6 ticks", tr.Len)
	}
	if want := []int{2, 2, 1, 1, 0, 0}; !slices.Equal(tr.Zones[0].Capacity, want) {
		t.Errorf("zone a = %v, want %v", tr.Zones[0].Capacity, want)
	}
}

func TestLoadTraceErrors(t *testing.T) {
	tests := []struct {
		name    string
		fsys    fstest.MapFS
		wantErr string
	}{
		{name: "no zone files", fsys: fstest.MapFS{"d/README": {Data: []byte("x")}}, wantErr: "holds no .json zone files"},
		{name: "names the bad file", fsys: fstest.MapFS{
			"d/ok.json":  {Data: []byte(`{"metadata":{"gap_seconds":30},"data":[1]}`)},
			"d/bad.json": {Data: []byte(`{"metadata":{"gap_seconds":34},"data":[1]}`)},
		}, wantErr: "d/bad.json: malformed trace: gap_seconds 34"},
		{name: "missing folder", fsys: fstest.MapFS{}, wantErr: "reading trace folder d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadTrace(tt.fsys, "d", LoadOptions{TickSeconds: 30})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("LoadTrace() error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// sharedTraces is ../shared/data/traces, found from this file's place in the repository.
func sharedTraces(t testing.TB) string {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "data", "traces")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared traces not found at %s (they live in ../shared/data beside the repository): %v", dir, err)
	}
	return dir
}

// TestLoadRealTraces reads every shared trace folder: the 30 s-compatible ones load, the 32 s and
// 34 s cant-be-late ones are refused with a hint, and load with a matching --tick.
func TestLoadRealTraces(t *testing.T) {
	root := sharedTraces(t)
	tests := []struct {
		dir      string
		tick     int
		binary   bool
		wantZone int
		wantLen  int
		wantErr  string
	}{
		{dir: "skyserve/AWS1", tick: 30, wantZone: 3, wantLen: 31560},
		{dir: "skyserve/AWS2", tick: 30, wantZone: 3, wantLen: 32470},
		{dir: "cant-be-late/availability-1node-aws-10-26-2022", tick: 30, binary: true, wantZone: 8, wantLen: 77900},
		{dir: "cant-be-late/preemption-1node-gcp-04-30-2023-cpu", tick: 30, binary: true, wantZone: 4, wantLen: 5476},
		{dir: "cant-be-late/preemption-1node-aws-04-22-2023", tick: 30, wantErr: "gap_seconds 32 is not a multiple of the 30 s tick: pass a --tick that divides it (e.g. --tick 32s)"},
		{dir: "cant-be-late/preemption-1node-aws-04-22-2023", tick: 32, binary: true, wantZone: 4, wantLen: 19961},
		{dir: "cant-be-late/preemption-1node-aws-04-19-2023-cpu", tick: 34, binary: true, wantZone: 3, wantLen: 16090},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			tr, err := LoadTrace(os.DirFS(root), tt.dir, LoadOptions{TickSeconds: tt.tick, Binary: tt.binary})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Zones) != tt.wantZone || tr.Len != tt.wantLen {
				t.Errorf("got %d zones of %d ticks, want %d of %d", len(tr.Zones), tr.Len, tt.wantZone, tt.wantLen)
			}
		})
	}
}

func FuzzParseZone(f *testing.F) {
	f.Add([]byte(`{"metadata":{"gap_seconds":300},"data":[4,4,3,0]}`), true)
	f.Add([]byte(`{"metadata":{"gap_seconds":30},"data":[0,1],"prices":[0.9,1.1]}`), false)
	f.Add([]byte(`{"metadata":{"gap_seconds":32},"data":[1]}`), false)
	f.Add([]byte(`{"data":[1e3]}`), false)
	f.Fuzz(func(t *testing.T, data []byte, binary bool) {
		z, err := ParseZone("z", data, LoadOptions{TickSeconds: 30, Binary: binary})
		if err != nil {
			if z.Capacity != nil {
				t.Fatalf("capacity %v returned with error %v", z.Capacity, err)
			}
			return
		}
		if len(z.Capacity) == 0 {
			t.Fatal("accepted a zone with no ticks")
		}
		for i, c := range z.Capacity {
			if c < 0 || (binary && c != 0 && c != Unlimited) {
				t.Fatalf("capacity[%d] = %d", i, c)
			}
		}
	})
}
