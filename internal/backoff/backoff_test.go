package backoff

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestCeiling(t *testing.T) {
	tests := []struct {
		name string
		p    Policy
		n    int
		want time.Duration
	}{
		{name: "first retry is Min", p: Policy{Min: time.Second, Max: time.Minute}, n: 1, want: time.Second},
		{name: "n below 1 counts as 1", p: Policy{Min: time.Second, Max: time.Minute}, n: 0, want: time.Second},
		{name: "doubles", p: Policy{Min: time.Second, Max: time.Minute}, n: 4, want: 8 * time.Second},
		{name: "capped at Max", p: Policy{Min: time.Second, Max: 5 * time.Second}, n: 4, want: 5 * time.Second},
		{name: "Max below Min caps Min", p: Policy{Min: time.Second, Max: time.Millisecond}, n: 1, want: time.Millisecond},
		{name: "huge n with a cap", p: Policy{Min: time.Second, Max: time.Minute}, n: math.MaxInt, want: time.Minute},
		{name: "huge n without a cap does not overflow", p: Policy{Min: time.Second}, n: 200, want: math.MaxInt64},
		{name: "zero policy waits nothing", p: Policy{}, n: 3, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Ceiling(tt.n); got != tt.want {
				t.Errorf("Ceiling(%d) = %v, want %v", tt.n, got, tt.want)
			}
		})
	}
}

// TestDelayBounds: every wait lies in the upper half of its ceiling, never above Max, and the
// lower bound grows with n until the cap.
func TestDelayBounds(t *testing.T) {
	p := Policy{Min: 100 * time.Millisecond, Max: 30 * time.Second, Rand: rand.New(rand.NewPCG(1, 2))}
	for n := 1; n <= 20; n++ {
		c := p.Ceiling(n)
		for range 200 {
			d := p.Delay(n)
			if d < c-c/2 || d > c || d > p.Max {
				t.Fatalf("Delay(%d) = %v, want within [%v, %v]", n, d, c-c/2, c)
			}
		}
	}
	if lo := p.Ceiling(9) - p.Ceiling(9)/2; lo <= p.Ceiling(1) {
		t.Errorf("retry 9 may wait %v, no more than retry 1's ceiling %v: not growing", lo, p.Ceiling(1))
	}
}

// TestDelaySpread: waits for the same retry differ, and cover the jitter range rather than
// bunching at one end.
func TestDelaySpread(t *testing.T) {
	p := Policy{Min: time.Second, Max: time.Minute, Rand: rand.New(rand.NewPCG(7, 7))}
	c := p.Ceiling(3)
	var lowHalf, highHalf int
	seen := map[time.Duration]bool{}
	for range 1000 {
		d := p.Delay(3)
		seen[d] = true
		if d < c-c/4 {
			lowHalf++
		} else {
			highHalf++
		}
	}
	if len(seen) < 900 {
		t.Errorf("1000 draws gave %d distinct waits", len(seen))
	}
	if lowHalf < 400 || highHalf < 400 {
		t.Errorf("draws split %d/%d across the jitter range; want roughly even", lowHalf, highHalf)
	}
}

// TestDelaySeeded: a seeded source gives the same waits again, and another seed other waits.
func TestDelaySeeded(t *testing.T) {
	draw := func(seed uint64) []time.Duration {
		p := Policy{Min: time.Second, Max: time.Minute, Rand: rand.New(rand.NewPCG(seed, 0))}
		var out []time.Duration
		for n := 1; n <= 5; n++ {
			out = append(out, p.Delay(n))
		}
		return out
	}
	a, again, b := draw(1), draw(1), draw(2)
	for i := range a {
		if a[i] != again[i] {
			t.Fatalf("seed 1 gave %v, then %v", a, again)
		}
	}
	if a[0] == b[0] {
		t.Errorf("seeds 1 and 2 both waited %v before the first retry", a[0])
	}
}

func TestAtLeast(t *testing.T) {
	p := Policy{Min: time.Second, Max: 5 * time.Second, Rand: rand.New(rand.NewPCG(3, 3))}
	tests := []struct {
		name   string
		n      int
		floor  time.Duration
		wantLo time.Duration
		wantHi time.Duration
	}{
		{name: "no Retry-After", n: 1, floor: 0, wantLo: 500 * time.Millisecond, wantHi: time.Second},
		{name: "Retry-After longer than the backoff wins", n: 1, floor: 7 * time.Second, wantLo: 7 * time.Second, wantHi: 7 * time.Second},
		{name: "Retry-After wins over the cap", n: 10, floor: time.Minute, wantLo: time.Minute, wantHi: time.Minute},
		{name: "a shorter Retry-After does not shorten the backoff", n: 3, floor: time.Millisecond, wantLo: 2 * time.Second, wantHi: 4 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.AtLeast(tt.n, tt.floor); got < tt.wantLo || got > tt.wantHi {
				t.Errorf("AtLeast(%d, %v) = %v, want within [%v, %v]", tt.n, tt.floor, got, tt.wantLo, tt.wantHi)
			}
		})
	}
}

func BenchmarkDelay(b *testing.B) {
	p := Policy{Min: 100 * time.Millisecond, Max: 30 * time.Second}
	for i := 0; b.Loop(); i++ {
		_ = p.Delay(i%40 + 1)
	}
}

func TestSleepEndsWithItsContext(t *testing.T) {
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Errorf("a wait that ran out: %v, want nil", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("a wait on an ended context: %v, want context.Canceled", err)
	}
	if err := Sleep(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("no wait on an ended context: %v, want context.Canceled", err)
	}
}
