package replay

import (
	"slices"
	"testing"
)

func TestMT19937(t *testing.T) {
	// The reference implementation's first outputs for init_genrand(5489), its default seed.
	m := newMT19937(5489)
	for i, want := range []uint32{3499211612, 581869302, 3890346734, 3586334585} {
		if got := m.uint32(); got != want {
			t.Fatalf("output %d = %d, want %d", i, got, want)
		}
	}
}

// TestMT19937DrawsPeerWindows: NumPy's randint(0, L-T) after seed(0) gives the peer's offsets,
// for AWS1's L-T = 28680 and AWS2's 29590 alike (both mask to 15 bits).
func TestMT19937DrawsPeerWindows(t *testing.T) {
	for _, span := range []int{28680, 29590} {
		m := newMT19937(0)
		got := make([]int, len(peerOffsets))
		for i := range got {
			got[i] = m.intN(span)
		}
		if !slices.Equal(got, peerOffsets) {
			t.Errorf("span %d: drew %v, want %v", span, got, peerOffsets)
		}
	}
}
