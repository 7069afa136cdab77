package serving

import (
	"fmt"
	"math"
)

// Offsets draws cfg.Windows window starts uniformly from [0, L-Length), L being the ticks both
// demand and capacity cover (aligned from their starts), the way internal/replay draws its
// windows: NumPy's legacy RandomState(seed).randint(0, L-Length) per window, as the SkyServe
// artifact does. internal/replay keeps that generator unexported and imports the service's
// stack (a cgo store), so this package has its own copy of the generator below.
func Offsets(in *Inputs, cfg Config) ([]int, error) {
	span := in.Ticks() - cfg.Length
	switch {
	case cfg.Length < 1:
		return nil, fmt.Errorf("window length must be at least 1 tick, got %d", cfg.Length)
	case span < 1:
		return nil, fmt.Errorf("demand %s and capacity overlap for %d minutes, not more than one window of %d",
			in.Demand.Name, in.Ticks(), cfg.Length)
	case cfg.Windows < 1:
		return nil, fmt.Errorf("windows must be at least 1, got %d", cfg.Windows)
	case cfg.Seed > math.MaxUint32:
		return nil, fmt.Errorf("seed %d is too large: windows are drawn with a 32-bit seed (0 to %d)", cfg.Seed, uint32(math.MaxUint32))
	}
	rng := newMT19937(uint32(cfg.Seed))
	offsets := make([]int, cfg.Windows)
	for i := range offsets {
		offsets[i] = rng.intN(span)
	}
	return offsets, nil
}

// mt19937 is the Mersenne Twister as NumPy's legacy RandomState uses it (as internal/replay's).
type mt19937 struct {
	state [624]uint32
	next  int
}

// newMT19937 seeds like NumPy's RandomState(seed) for a 32-bit seed (init_genrand).
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
	y := m.state[m.next]
	m.next++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	return y ^ y>>18
}

// intN draws from [0, n) as NumPy's legacy randint does: mask to the next power of two, reject.
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
