package demo

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// ErrBadDemand marks a demand file that cannot be read.
var ErrBadDemand = errors.New("malformed demand")

// maxDemandMinutes bounds a demand file: two weeks of minutes, ServeGen's span.
const maxDemandMinutes = 14 * 24 * 60

// demandHeader is the per-minute format of ../shared/SERVING.md.
var demandHeader = []string{"minute", "requests", "input_tokens", "output_tokens"}

// Minute is what arrived in one minute of a demand trace.
type Minute struct {
	Requests float64 // requests arriving in the minute
	Input    float64 // their prompt tokens
	Output   float64 // their generated tokens
}

// Tokens is the minute's prompt and generated tokens: what the arbiter's tokens_per_second counts.
func (m Minute) Tokens() float64 { return m.Input + m.Output }

// ParseDemand reads a per-minute demand CSV in SERVING.md's format,
// `minute,requests,input_tokens,output_tokens`, one row per minute in order with no gap. The
// first row's minute may be any: a slice of a longer trace keeps the source's minute numbers, so
// it can be checked against it line by line.
func ParseDemand(r io.Reader, name string) ([]Minute, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = len(demandHeader)
	cr.ReuseRecord = true
	want := strings.Join(demandHeader, ",")
	head, err := cr.Read()
	if err != nil {
		return nil, readErr(name, err, "want the header "+want)
	}
	for i, h := range demandHeader {
		if strings.TrimSpace(head[i]) != h {
			return nil, demandErr(name, cr, fmt.Sprintf("column %d is %q, want the header %s", i+1, head[i], want))
		}
	}
	var out []Minute
	first := 0
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, readErr(name, err, "")
		}
		m, minute, msg := parseMinute(rec)
		switch {
		case msg != "":
			return nil, demandErr(name, cr, msg)
		case len(out) == 0:
			first = minute
		case minute != first+len(out):
			return nil, demandErr(name, cr, fmt.Sprintf("minute %d follows minute %d: want one row per minute, in order", minute, first+len(out)-1))
		}
		if len(out) == maxDemandMinutes {
			return nil, demandErr(name, cr, fmt.Sprintf("more than %d minutes", maxDemandMinutes))
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %s holds no minutes after its header", ErrBadDemand, name)
	}
	return out, nil
}

// parseMinute reads one row; msg says what is wrong with it.
func parseMinute(rec []string) (m Minute, minute int, msg string) {
	minute, err := strconv.Atoi(strings.TrimSpace(rec[0]))
	if err != nil || minute < 0 {
		return m, 0, fmt.Sprintf("minute %q is not a whole number of 0 or more", rec[0])
	}
	var vals [3]float64
	for i := range vals {
		v, err := strconv.ParseFloat(strings.TrimSpace(rec[i+1]), 64)
		if err != nil || !(v >= 0) || math.IsInf(v, 0) {
			return m, 0, fmt.Sprintf("%s %q is not a number of 0 or more", demandHeader[i+1], rec[i+1])
		}
		vals[i] = v
	}
	return Minute{Requests: vals[0], Input: vals[1], Output: vals[2]}, minute, ""
}

// readErr is the error for a row the CSV reader refused; it names the line where the reader does.
func readErr(name string, err error, msg string) error {
	var pe *csv.ParseError
	switch {
	case errors.As(err, &pe):
		return fmt.Errorf("%w: %s:%d: %v", ErrBadDemand, name, pe.Line, pe.Err)
	case msg != "":
		return fmt.Errorf("%w: %s: %s (%v)", ErrBadDemand, name, msg, err)
	}
	return fmt.Errorf("%w: %s: %v", ErrBadDemand, name, err)
}

// demandErr is the error for the row the reader last returned, at its line.
func demandErr(name string, cr *csv.Reader, msg string) error {
	line, _ := cr.FieldPos(0)
	if line == 0 {
		return fmt.Errorf("%w: %s: %s", ErrBadDemand, name, msg)
	}
	return fmt.Errorf("%w: %s:%d: %s", ErrBadDemand, name, line, msg)
}
