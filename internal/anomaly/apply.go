package anomaly

import "slices"

// Apply returns a copy of w with j injected. What each kind does to the series is written in
// docs/anomalies.md.
func Apply(w *Workload, j Injection) *Workload {
	out := &Workload{Name: w.Name, Start: w.Start, Step: w.Step, Leaves: make([]Leaf, len(w.Leaves))}
	for k, l := range w.Leaves {
		out.Leaves[k] = Leaf{Series: l.Series, Location: l.Location, OnDemand: l.OnDemand,
			USDPerHour: slices.Clone(l.USDPerHour), GPUs: slices.Clone(l.GPUs), Tokens: slices.Clone(l.Tokens)}
	}
	from := max(0, int(j.Start.Sub(w.Start)/w.Step))
	to := min(w.Steps(), int((j.End().Sub(w.Start)+w.Step-1)/w.Step))
	if j.Kind == StuckOnDemand {
		out.onDemandLeaf(j.Target)
	}
	for i := from; i < to; i++ {
		out.inject(j, i)
	}
	return out
}

// inject applies j at step i.
func (w *Workload) inject(j Injection, i int) {
	t := &w.Leaves[j.Target]
	switch j.Kind {
	case PriceSpike:
		t.USDPerHour[i] *= j.Size
	case RunawayScaleUp:
		t.scale(i, j.Size)
	case DemandSurge:
		for k := range w.Leaves {
			l := &w.Leaves[k]
			l.scale(i, j.Size)
			if l.Tokens != nil {
				l.Tokens[i] *= j.Size
			}
		}
	case StuckOnDemand:
		od := &w.Leaves[w.onDemandLeaf(j.Target)]
		od.USDPerHour[i] += t.USDPerHour[i] * j.Size
		od.GPUs[i] += t.GPUs[i]
		t.USDPerHour[i], t.GPUs[i] = 0, 0
	case ZoneOutage:
		w.outage(j, i)
	}
}

func (l *Leaf) scale(i int, k float64) {
	l.USDPerHour[i] *= k
	l.GPUs[i] *= k
}

// outage empties the target's location at step i and moves its spend, × Size, to the other
// leaves in proportion to theirs (to the first other leaf when they spent nothing).
func (w *Workload) outage(j Injection, i int) {
	loc := w.Leaves[j.Target].Location
	lost, rest := 0.0, 0.0
	var others []int
	for k := range w.Leaves {
		l := &w.Leaves[k]
		if l.Location == loc {
			lost += l.USDPerHour[i]
			l.USDPerHour[i], l.GPUs[i] = 0, 0
			continue
		}
		others = append(others, k)
		rest += l.USDPerHour[i]
	}
	for _, k := range others {
		share := 1.0 / float64(len(others))
		if rest > 0 {
			share = w.Leaves[k].USDPerHour[i] / rest
		}
		w.Leaves[k].USDPerHour[i] += lost * j.Size * share
	}
	if len(others) == 0 { // one location only: the spend goes nowhere else; model it in place
		w.Leaves[j.Target].USDPerHour[i] = lost * j.Size
	}
}

// onDemandLeaf is the index of the on-demand leaf the target's fallback goes to: one of the
// workload's on-demand leaves, or a new one in the target's location.
func (w *Workload) onDemandLeaf(target int) int {
	for k, l := range w.Leaves {
		if l.OnDemand {
			return k
		}
	}
	t := w.Leaves[target]
	n := w.Steps()
	w.Leaves = append(w.Leaves, Leaf{Series: t.Series + "/fallback-on-demand", Location: t.Location, OnDemand: true,
		USDPerHour: make([]float64, n), GPUs: make([]float64, n)})
	return len(w.Leaves) - 1
}
