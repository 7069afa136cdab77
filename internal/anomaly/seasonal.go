package anomaly

import (
	"math"
	"time"
)

// Config tunes Bursar's detector. DefaultConfig's values were tuned on the benchmark's tuning
// half (docs/anomalies.md).
type Config struct {
	// Step is the series' resolution.
	Step time.Duration
	// Z is how many robust standard deviations (1.4826 × MAD of past residuals) above the
	// baseline a step must be.
	Z float64
	// SpikeQuantile: a step must also exceed this quantile of past residuals, the spikes the
	// series shows in normal running (spot reclaims, short on-demand fallbacks).
	SpikeQuantile float64
	// MinRatio: a step must be at least this multiple of the baseline.
	MinRatio float64
	// MinUSDPerHour: and at least this far above it, so that idle series do not alert on cents.
	MinUSDPerHour float64
	// Persist is how many steps in a row must be over the threshold to open an anomaly; one step
	// is enough when it is over twice the threshold.
	Persist int
	// Calm is how many steps in a row under half the threshold close it.
	Calm int
	// Hold is how long an open anomaly keeps its steps out of the baseline; after it the
	// baseline learns the new level (a change nobody answered becomes the normal).
	Hold time.Duration
}

// DefaultConfig is Bursar's detector at a 5-minute step.
func DefaultConfig() Config {
	return Config{Step: 5 * time.Minute, Z: 5, SpikeQuantile: 0.995, MinRatio: 1.3, MinUSDPerHour: 0.5,
		Persist: 2, Calm: 3, Hold: 6 * time.Hour}
}

// Seasonal is Bursar's detector for one series: a seasonal baseline (the median of the same time
// of day over the last 7 days, or of the same time of week over the last 4 weeks once 2 weeks
// are known, each ±10 minutes; a rolling hour's median before a day is known) shifted by the
// recent level (the median residual of the last 2 hours), and a robust spread (MAD of the last
// 7 days' residuals, and their high quantile).
type Seasonal struct {
	key   string
	cfg   Config
	base  baseline
	resid window // residuals of normal steps, for the spread
	// spread is refreshed hourly: sorting a week of residuals every step is needless.
	sigma, spike float64
	sinceSpread  int
	over         int // steps in a row over the threshold
	calm         int
	runStart     time.Time
	runImpact    float64
	open         *Anomaly
}

var _ Detector = (*Seasonal)(nil)

// NewSeasonal is Bursar's detector for the series named key.
func NewSeasonal(key string, cfg Config) *Seasonal {
	perDay := int(24 * time.Hour / cfg.Step)
	return &Seasonal{key: key, cfg: cfg, base: newBaseline(cfg.Step), resid: window{n: 7 * perDay}}
}

// Expected is the baseline for the next step (NaN while the history is under an hour).
func (s *Seasonal) Expected() float64 { return s.base.expected() }

// Observe takes the next step.
func (s *Seasonal) Observe(p Point) []Event {
	exp := s.base.expected()
	if math.IsNaN(exp) {
		s.base.push(p.USDPerHour)
		return nil
	}
	s.refreshSpread()
	excess := p.USDPerHour - exp
	thr := s.threshold(exp)
	events := s.step(p, exp, excess, thr)
	held := s.open != nil && p.At.Sub(s.open.Start) < s.cfg.Hold
	if held || s.over > 0 {
		s.base.push(exp) // keep the anomaly out of its own baseline
	} else {
		s.base.push(p.USDPerHour)
		s.resid.push(excess)
	}
	return events
}

// threshold is how far above the baseline exp a step must be.
func (s *Seasonal) threshold(exp float64) float64 {
	return max(s.cfg.Z*s.sigma, s.spike, (s.cfg.MinRatio-1)*exp, s.cfg.MinUSDPerHour)
}

func (s *Seasonal) refreshSpread() {
	if s.sinceSpread > 0 && s.sinceSpread < 12 {
		s.sinceSpread++
		return
	}
	s.sinceSpread = 1
	r := s.resid.last()
	if len(r) < 12 {
		s.sigma, s.spike = 0, 0
		return
	}
	s.sigma = madScale * mad(r, median(r))
	s.spike = quantile(r, s.cfg.SpikeQuantile)
}

// step moves the anomaly's state by one point.
func (s *Seasonal) step(p Point, exp, excess, thr float64) []Event {
	hours := s.cfg.Step.Hours()
	end := p.At.Add(s.cfg.Step)
	if s.open != nil {
		a := s.open
		a.ExpectedUSDPerHour, a.ObservedUSDPerHour = exp, p.USDPerHour
		a.ImpactUSD += excess * hours
		if excess < thr/2 {
			s.calm++
		} else {
			s.calm = 0
		}
		if s.calm >= s.cfg.Calm {
			a.End = end
			s.open, s.over, s.calm = nil, 0, 0
			return []Event{{Closed, *a}}
		}
		return []Event{{Updated, *a}}
	}
	if excess < thr {
		s.over, s.runImpact = 0, 0
		return nil
	}
	if s.over == 0 {
		s.runStart = p.At
	}
	s.over++
	s.runImpact += excess * hours
	if s.over < s.cfg.Persist && excess < 2*thr {
		return nil
	}
	s.open = &Anomaly{Series: s.key, Start: s.runStart, DetectedAt: end,
		ExpectedUSDPerHour: exp, ObservedUSDPerHour: p.USDPerHour, ImpactUSD: s.runImpact}
	s.calm = 0
	return []Event{{Opened, *s.open}}
}
