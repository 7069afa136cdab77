// Package windows draws replay windows as the SkyServe artifact does: NumPy's legacy
// RandomState(seed) followed by randint(0, span) per window. With seed 0 that gives the peer's own
// offsets (REPLAY.md), so results compare with the peer's without copying offsets around. Both
// replays (internal/replay, internal/serving) draw through it.
package windows

import (
	"fmt"
	"math"
)

// Draw returns n window offsets in [0, span), as np.random.seed(seed); np.random.randint(0, span)
// n times.
func Draw(seed uint64, n, span int) ([]int, error) {
	switch {
	case n < 1:
		return nil, fmt.Errorf("windows must be at least 1, got %d", n)
	case span < 1:
		return nil, fmt.Errorf("no room to draw a window from: %d ticks to start in", span)
	case seed > math.MaxUint32:
		return nil, fmt.Errorf("seed %d is too large: windows are drawn with a 32-bit seed (0 to %d)", seed, uint32(math.MaxUint32))
	}
	rng := newMT19937(uint32(seed))
	offsets := make([]int, n)
	for i := range offsets {
		offsets[i] = rng.intN(span)
	}
	return offsets, nil
}

// mt19937 is the Mersenne Twister as NumPy's legacy RandomState uses it.
type mt19937 struct {
	state [624]uint32
	next  int
}

// newMT19937 seeds like NumPy's RandomState(seed) for a 32-bit integer seed (init_genrand).
func newMT19937(seed uint32) *mt19937 {
	m := &mt19937{next: 624}
	m.state[0] = seed
	for i := 1; i < 624; i++ {
		prev := m.state[i-1]
		m.state[i] = 1812433253*(prev^(prev>>30)) + uint32(i)
	}
	return m
}

func (m *mt19937) uint32() uint32 {
	if m.next >= 624 {
		m.twist()
	}
	y := m.state[m.next]
	m.next++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

func (m *mt19937) twist() {
	for k := range 624 {
		y := m.state[k]&0x80000000 | m.state[(k+1)%624]&0x7fffffff
		v := m.state[(k+397)%624] ^ y>>1
		if y&1 != 0 {
			v ^= 0x9908b0df
		}
		m.state[k] = v
	}
	m.next = 0
}

// intN draws uniformly from [0, n) for 0 < n <= 2^32 the way NumPy's legacy randint does: mask a
// 32-bit draw to the next power of two and reject values out of range.
func (m *mt19937) intN(n int) int {
	hi := uint32(n - 1)
	mask := hi
	for _, s := range []uint{1, 2, 4, 8, 16} {
		mask |= mask >> s
	}
	for {
		if v := m.uint32() & mask; v <= hi {
			return int(v)
		}
	}
}
