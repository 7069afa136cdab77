package demo

import (
	"sync"
	"time"
)

// Clock is the demo's trace time. It stands still until the driver moves it a tick on, so the
// arbiter, the sim fleet and the driver see the same time, a run takes as long as the CPU needs
// (not wall time) and two runs of one trace see the same things at the same times.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock standing at start.
func NewClock(start time.Time) *Clock { return &Clock{now: start.UTC()} }

// Now is the trace time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t.UTC()
	c.mu.Unlock()
}
