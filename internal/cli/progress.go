package cli

import (
	"bytes"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
)

// PlainProgressEvery is how often a progress bar written somewhere other than a terminal prints
// a line: often enough to follow a CI log, rarely enough not to flood it.
const PlainProgressEvery = 10 * time.Second

// ProgressWriter returns where a progress bar drawn with "\r" frames should go: w itself when w
// is a terminal, else a writer that turns frames into plain lines, so a file or a pipe gets
// readable progress and no carriage returns.
func ProgressWriter(w io.Writer) io.Writer {
	if IsTerminal(w) {
		return w
	}
	return NewPlainProgress(w, PlainProgressEvery, time.Now)
}

// IsTerminal reports whether w is a file open on a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// PlainProgress writes a progress bar's frames as lines: the first frame, then at most one every
// interval, and every frame that ends a bar (ends with a newline). Anything else written passes
// through unchanged.
type PlainProgress struct {
	w     io.Writer
	every time.Duration
	now   func() time.Time
	mu    sync.Mutex
	last  time.Time
	wrote bool
}

// NewPlainProgress returns a PlainProgress printing to w at most once every interval by now.
func NewPlainProgress(w io.Writer, every time.Duration, now func() time.Time) *PlainProgress {
	return &PlainProgress{w: w, every: every, now: now}
}

// Write takes one frame ("\r" and the bar, perhaps a final newline) or plain text.
func (p *PlainProgress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !bytes.HasPrefix(b, []byte("\r")) {
		return p.w.Write(b)
	}
	frame := bytes.TrimRight(bytes.TrimLeft(b, "\r"), " \n")
	final := bytes.HasSuffix(b, []byte("\n"))
	now := p.now()
	if !final && p.wrote && now.Sub(p.last) < p.every {
		return len(b), nil
	}
	p.last, p.wrote = now, true
	line := append(append([]byte{}, frame...), '\n')
	if _, err := p.w.Write(line); err != nil {
		return 0, err
	}
	return len(b), nil
}
