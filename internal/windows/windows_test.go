package windows

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
	peerOffsets := []int{2732, 10799, 9845, 19648, 13123, 21243, 9225, 24275, 20757, 22258} // REPLAY.md
	for _, span := range []int{28680, 29590} {
		got, err := Draw(0, len(peerOffsets), span)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, peerOffsets) {
			t.Errorf("span %d: drew %v, want %v", span, got, peerOffsets)
		}
	}
}

func TestDrawRefuses(t *testing.T) {
	for _, c := range []struct {
		seed    uint64
		n, span int
	}{{0, 0, 10}, {0, 1, 0}, {1 << 33, 1, 10}} {
		if _, err := Draw(c.seed, c.n, c.span); err == nil {
			t.Errorf("Draw(%d, %d, %d): want an error", c.seed, c.n, c.span)
		}
	}
}
