package anomaly

import (
	"math"
	"slices"
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
	// SpikeQuantile: a step must also exceed this quantile of the last 7 days' largest
	// residuals (one per day), the excursions the series makes in normal running (spot reclaims,
	// on-demand fallbacks). Daily maxima, not all residuals: a single anomalous day then does
	// not raise the bar for the week after it.
	SpikeQuantile float64
	// MinRatio: a step must be at least this multiple of the baseline.
	MinRatio float64
	// UnitPriceRatio is MinRatio for a scope's unit price ($ per GPU-hour): a market mix
	// moves it more than a price does.
	UnitPriceRatio float64
	// MinUSDPerHour: and at least this far above it, so that idle series do not alert on cents.
	MinUSDPerHour float64
	// Persist is how many steps in a row must be over the threshold to open an anomaly; one step
	// is enough when it is over twice the threshold and over the single steps' spike quantile.
	Persist int
	// Calm is how many steps in a row under half the threshold close it.
	Calm int
	// Learnable is how many steps of each excursion go into the spread's residuals.
	Learnable int
	// Learn is how much history the detector needs before it alerts: two days give it a
	// season and a sight of its usual excursions.
	Learn time.Duration
	// Hold is how long an open anomaly keeps its steps out of the baseline; after it the
	// baseline learns the new level (a change nobody answered becomes the normal).
	Hold time.Duration
}

// DefaultConfig is Bursar's detector at a 5-minute step.
func DefaultConfig() Config {
	return Config{Step: 5 * time.Minute, Z: 4, SpikeQuantile: 0.75, MinRatio: 1.4, UnitPriceRatio: 1.5, MinUSDPerHour: 0.5,
		Persist: 2, Calm: 3, Learnable: 6, Learn: 48 * time.Hour, Hold: 6 * time.Hour}
}

// Seasonal is Bursar's detector for one series: a baseline (baseline.go: the seasonal median
// shifted by the recent level, or the rolling hour's median, whichever predicted the last day
// better), a robust spread (MAD of the last 7 days' residuals) and a spike allowance (a quantile
// of the last 7 days' daily maxima of residuals lasting Persist steps). docs/anomalies.md states
// the rules.
type Seasonal struct {
	key   string
	cfg   Config
	base  baseline
	resid window // residuals of normal steps, for the spread
	// dayMax and dayMax1 are, for each of the last 7 days, the largest residual that lasted
	// Persist steps (the smallest of Persist in a row: what a normal excursion long enough to
	// open an anomaly looks like) and the largest single one; today and today1 those of the day
	// under way.
	dayMax, dayMax1 window
	today, today1   float64
	seen            int // steps observed
	// spread is refreshed hourly: sorting a week of residuals every step is needless.
	sigma, spike, spike1 float64
	sinceSpread          int
	over                 int // steps in a row over the threshold
	calm                 int
	runStart             time.Time
	runImpact            float64
	open                 *Anomaly
}

var _ Detector = (*Seasonal)(nil)

// NewSeasonal is Bursar's detector for the series named key.
func NewSeasonal(key string, cfg Config) *Seasonal {
	perDay := int(24 * time.Hour / cfg.Step)
	return &Seasonal{key: key, cfg: cfg, base: newBaseline(cfg.Step), resid: window{n: 7 * perDay},
		dayMax: window{n: 7}, dayMax1: window{n: 7}, today: math.Inf(-1), today1: math.Inf(-1)}
}

// Expected is the baseline for the next step (NaN while the history is under an hour).
func (s *Seasonal) Expected() float64 { return s.base.expected() }

// Observe takes the next step. A step whose spend is not a finite number (a gap in the
// recorder's rollup) is skipped: it neither alerts nor enters the history.
func (s *Seasonal) Observe(p Point) []Event {
	if math.IsNaN(p.USDPerHour) || math.IsInf(p.USDPerHour, 0) {
		return nil
	}
	exp := s.base.expected()
	s.seen++
	defer s.rollDay()
	if math.IsNaN(exp) || time.Duration(s.seen)*s.cfg.Step <= s.cfg.Learn {
		s.base.push(p.USDPerHour)
		if !math.IsNaN(exp) {
			s.pushResidual(p.USDPerHour - exp)
		}
		return nil
	}
	s.refreshSpread()
	excess := p.USDPerHour - exp
	thr := s.threshold(exp)
	events := s.step(p, exp, excess, thr)
	excursion := s.open != nil || s.over > 0
	if !excursion {
		s.base.push(p.USDPerHour)
		s.pushResidual(excess)
		return events
	}
	since := p.At.Sub(s.runStart)
	if since < s.cfg.Hold {
		s.base.push(exp) // keep the anomaly out of its own baseline
	} else {
		s.base.push(p.USDPerHour)
	}
	// The first steps of every excursion teach the spread what excursions this series makes (a
	// spot fleet's fallbacks to on-demand); a long one does not teach more than a short one.
	if since < time.Duration(s.cfg.Learnable)*s.cfg.Step {
		s.pushResidual(excess)
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
		s.sigma, s.spike, s.spike1 = 0, 0, 0
		return
	}
	s.sigma = madScale * mad(r, median(r))
	s.spike, s.spike1 = math.Max(s.today, 0), math.Max(s.today1, 0)
	if len(s.dayMax.values) > 0 {
		s.spike = quantile(s.dayMax.last(), s.cfg.SpikeQuantile)
		s.spike1 = quantile(s.dayMax1.last(), s.cfg.SpikeQuantile)
	}
}

// pushResidual records a normal step's residual and the smallest of the last Persist ones.
func (s *Seasonal) pushResidual(r float64) {
	s.resid.push(r)
	s.today1 = math.Max(s.today1, r)
	last := s.resid.last()
	if len(last) >= s.cfg.Persist {
		s.today = math.Max(s.today, slices.Min(last[len(last)-s.cfg.Persist:]))
	}
}

// rollDay closes the day's maxima every day of steps.
func (s *Seasonal) rollDay() {
	if s.seen%int(24*time.Hour/s.cfg.Step) != 0 {
		return
	}
	if !math.IsInf(s.today, -1) {
		s.dayMax.push(s.today)
		s.dayMax1.push(s.today1)
	}
	s.today, s.today1 = math.Inf(-1), math.Inf(-1)
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
	if s.over < s.cfg.Persist && excess < max(2*thr, s.spike1) {
		return nil
	}
	s.open = &Anomaly{Series: s.key, Start: s.runStart, DetectedAt: end,
		ExpectedUSDPerHour: exp, ObservedUSDPerHour: p.USDPerHour, ImpactUSD: s.runImpact}
	s.calm = 0
	return []Event{{Opened, *s.open}}
}
