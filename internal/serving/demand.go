package serving

import (
	"fmt"
	"io"
)

// Demand is a per-minute demand trace: what arrived in each minute, and SERVING.md's reading of
// it, output tokens/s per minute.
type Demand struct {
	Name string
	// First is the first row's minute: a slice of a longer trace may keep the source's numbers.
	First   int
	Minutes []Minute
	// TokensPerS[m] is output_tokens[m] / 60.
	TokensPerS []float64
}

// Minute is what arrived in one minute of a demand trace.
type Minute struct {
	Requests float64 // requests arriving in the minute
	Input    float64 // their prompt tokens
	Output   float64 // their generated tokens
}

// Tokens is the minute's prompt and generated tokens.
func (m Minute) Tokens() float64 { return m.Input + m.Output }

// ParseDemand reads the per-minute CSV `minute,requests,input_tokens,output_tokens` (other
// columns are ignored). Minutes must follow each other without gaps, from any first one: a
// missing minute would shift the trace against capacity, which is aligned by offset from the
// start.
func ParseDemand(name string, r io.Reader) (*Demand, error) {
	tb, err := readTable(name, r, "minute", "requests", "input_tokens", "output_tokens")
	if err != nil {
		return nil, err
	}
	if len(tb.rows) == 0 {
		return nil, fmt.Errorf("%s: %w: no minutes after the header", name, ErrMalformedInput)
	}
	d := &Demand{Name: name, Minutes: make([]Minute, len(tb.rows)), TokensPerS: make([]float64, len(tb.rows))}
	for i := range tb.rows {
		m, err := tb.whole(i, "minute")
		if err != nil {
			return nil, err
		}
		if i == 0 {
			d.First = m
		} else if m != d.First+i {
			return nil, tb.errf(i, "minute %d follows minute %d: want one row per minute, in order, without gaps", m, d.First+i-1)
		}
		var v [3]float64
		for k, c := range []string{"requests", "input_tokens", "output_tokens"} {
			if v[k], err = tb.num(i, c); err != nil {
				return nil, err
			}
		}
		d.Minutes[i] = Minute{Requests: v[0], Input: v[1], Output: v[2]}
		d.TokensPerS[i] = v[2] / 60
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
