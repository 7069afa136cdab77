package report

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"sort"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Point is one value of one line at one time.
type Point struct {
	Line  string
	At    time.Time
	Value float64
}

// Series is what a chart plots: a few named lines over the window in fixed time steps.
type Series struct {
	YLabel string
	Start  time.Time
	Step   time.Duration
	Lines  []Line
}

// Line is one named line; Values[i] is the sum in step i.
type Line struct {
	Name   string
	Values []float64
}

// maxLines is how many lines a chart shows; the rest are summed as "other".
const maxLines = 6

// NewSeries sums points into steps over the window and keeps the largest lines.
func NewSeries(ylabel string, w Window, step time.Duration, pts []Point) *Series {
	start := w.Since.UTC().Truncate(step)
	n := int(w.Until.Sub(start)/step) + 1
	if w.Until.Sub(start)%step == 0 {
		n--
	}
	lines := map[string][]float64{}
	totals := map[string]float64{}
	for _, p := range pts {
		i := int(p.At.Sub(start) / step)
		if i < 0 || i >= n {
			continue
		}
		if lines[p.Line] == nil {
			lines[p.Line] = make([]float64, n)
		}
		lines[p.Line][i] += p.Value
		totals[p.Line] += p.Value
	}
	names := make([]string, 0, len(lines))
	for k := range lines {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		if totals[names[i]] != totals[names[j]] {
			return totals[names[i]] > totals[names[j]]
		}
		return names[i] < names[j]
	})
	s := &Series{YLabel: ylabel, Start: start, Step: step}
	var other []float64
	for i, name := range names {
		if i < maxLines {
			s.Lines = append(s.Lines, Line{Name: name, Values: lines[name]})
			continue
		}
		if other == nil {
			other = make([]float64, n)
		}
		for j, v := range lines[name] {
			other[j] += v
		}
	}
	if other != nil {
		s.Lines = append(s.Lines, Line{Name: "other", Values: other})
	}
	return s
}

var palette = []color.Color{
	color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{44, 160, 44, 255},
	color.RGBA{214, 39, 40, 255}, color.RGBA{148, 103, 189, 255}, color.RGBA{140, 86, 75, 255},
	color.RGBA{127, 127, 127, 255},
}

// RenderPNG draws the series as a line chart and writes it as PNG.
func (s *Series) RenderPNG(w io.Writer, title string) error {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = s.YLabel
	p.X.Label.Text = "UTC"
	p.X.Tick.Marker = plot.TimeTicks{Format: timeFormat(s.Step)}
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	for i, l := range s.Lines {
		xys := make(plotter.XYs, len(l.Values))
		for j, v := range l.Values {
			xys[j].X = float64(s.Start.Add(time.Duration(j) * s.Step).Unix())
			xys[j].Y = v
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return fmt.Errorf("plotting %s: %w", l.Name, err)
		}
		line.Color = palette[i%len(palette)]
		line.Width = vg.Points(1.5)
		p.Add(line)
		p.Legend.Add(l.Name, line)
	}
	c := vgimg.PngCanvas{Canvas: vgimg.New(9*vg.Inch, 4*vg.Inch)}
	p.Draw(draw.New(c))
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("writing the chart: %w", err)
	}
	return nil
}

// PNG renders the chart into memory.
func (s *Series) PNG(title string) ([]byte, error) {
	var b bytes.Buffer
	if err := s.RenderPNG(&b, title); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func timeFormat(step time.Duration) string {
	if step >= 24*time.Hour {
		return "Jan 2"
	}
	return "Jan 2\n15:04"
}
