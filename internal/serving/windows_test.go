package serving

import (
	"slices"
	"testing"
)

// TestOffsetsDrawPeerWindows: randint(0, 28680) after seed(0) gives the SkyServe artifact's AWS1
// windows that REPLAY.md lists (internal/windows tests the generator itself).
func TestOffsetsDrawPeerWindows(t *testing.T) {
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
