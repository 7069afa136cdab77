package serving

import (
	"slices"
	"testing"
)

// TestMT19937DrawsPeerWindows: the generator is NumPy's legacy one: its first outputs for the
// reference seed 5489, and randint(0, 28680) after seed(0) gives the SkyServe artifact's AWS1
// windows that REPLAY.md lists.
func TestMT19937DrawsPeerWindows(t *testing.T) {
	m := newMT19937(5489)
	for i, want := range []uint32{3499211612, 581869302, 3890346734, 3586334585} {
		if got := m.uint32(); got != want {
			t.Fatalf("output %d = %d, want %d", i, got, want)
		}
	}
	in := &Inputs{Demand: &Demand{TokensPerS: make([]float64, 28680+2880)}, Capacity: &Capacity{GPUs: make([][]int, 40000)}}
	got, err := Offsets(in, Config{Length: 2880, Windows: 10, Seed: 0})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{2732, 10799, 9845, 19648, 13123, 21243, 9225, 24275, 20757, 22258}; !slices.Equal(got, want) {
		t.Errorf("offsets %v, want %v", got, want)
	}
	for _, cfg := range []Config{{Length: 40000, Windows: 1}, {Length: 10, Windows: 0}, {Length: 10, Windows: 1, Seed: 1 << 33}} {
		if _, err := Offsets(in, cfg); err == nil {
			t.Errorf("%+v: want an error", cfg)
		}
	}
}
