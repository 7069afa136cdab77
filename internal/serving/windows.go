package serving

import (
	"fmt"

	"github.com/bursar-dev/bursar/internal/windows"
)

// Offsets draws cfg.Windows window starts uniformly from [0, L-Length), L being the ticks both
// demand and capacity cover (aligned from their starts), the way internal/replay draws its
// windows: NumPy's legacy RandomState(seed).randint(0, L-Length) per window, as the SkyServe
// artifact does (internal/windows).
func Offsets(in *Inputs, cfg Config) ([]int, error) {
	span := in.Ticks() - cfg.Length
	switch {
	case cfg.Length < 1:
		return nil, fmt.Errorf("window length must be at least 1 tick, got %d", cfg.Length)
	case span < 1:
		return nil, fmt.Errorf("demand %s and capacity overlap for %d minutes, not more than one window of %d",
			in.Demand.Name, in.Ticks(), cfg.Length)
	}
	return windows.Draw(cfg.Seed, cfg.Windows, span)
}
