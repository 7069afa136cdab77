package serving

import (
	"fmt"
	"io"
)

// Demand is a per-minute demand trace as SERVING.md reads it: output tokens/s per minute.
type Demand struct {
	Name string
	// TokensPerS[m] is output_tokens[m] / 60.
	TokensPerS []float64
}

// ParseDemand reads the per-minute CSV `minute,requests,input_tokens,output_tokens` (other
// columns are ignored). Minutes must run 0, 1, 2, ... without gaps: a missing minute would shift
// the trace against capacity, which is aligned by offset from the start.
func ParseDemand(name string, r io.Reader) (*Demand, error) {
	tb, err := readTable(name, r, "minute", "requests", "input_tokens", "output_tokens")
	if err != nil {
		return nil, err
	}
	if len(tb.rows) == 0 {
		return nil, fmt.Errorf("%s: %w: no minutes after the header", name, ErrMalformedInput)
	}
	d := &Demand{Name: name, TokensPerS: make([]float64, len(tb.rows))}
	for i := range tb.rows {
		m, err := tb.whole(i, "minute")
		if err != nil {
			return nil, err
		}
		if m != i {
			return nil, tb.errf(i, "minute %d, want %d: minutes must start at 0 and have no gaps", m, i)
		}
		for _, c := range []string{"requests", "input_tokens"} {
			if _, err := tb.num(i, c); err != nil {
				return nil, err
			}
		}
		out, err := tb.num(i, "output_tokens")
		if err != nil {
			return nil, err
		}
		d.TokensPerS[i] = out / 60
	}
	return d, nil
}

// Peak is the trace's highest demand in tokens/s.
func (d *Demand) Peak() float64 {
	p := 0.0
	for _, v := range d.TokensPerS {
		p = max(p, v)
	}
	return p
}
