package demo

import (
	"sync"
	"time"
)

// Clock is trace time running Speed times faster than the wall clock from Start. The arbiter, the
// sim fleet and the driver all read it, so one minute of the trace passes for all of them in
// 1/Speed of a wall minute.
type Clock struct {
	mu      sync.Mutex
	start   time.Time // trace time at wall
	wall    time.Time
	speed   float64
	wallNow func() time.Time
}

// NewClock returns a clock standing at start until Run is called.
func NewClock(start time.Time, speed float64, wallNow func() time.Time) *Clock {
	return &Clock{start: start, speed: speed, wallNow: wallNow}
}

// Run starts the clock: from now on trace time advances Speed seconds per wall second.
func (c *Clock) Run() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wall = c.wallNow()
}

// Now is the trace time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.wall.IsZero() {
		return c.start
	}
	elapsed := float64(c.wallNow().Sub(c.wall)) * c.speed
	return c.start.Add(time.Duration(elapsed)).UTC()
}

// Wall converts a span of trace time to wall time.
func (c *Clock) Wall(d time.Duration) time.Duration {
	return time.Duration(float64(d) / c.speed)
}
