package zookeeper

import (
	"sync"
	"time"
)

// pauseTick is how often a registry's pauseClock looks at the clock: a pause is measured to within it.
const pauseTick = 500 * time.Millisecond

// pauseMin is how much later than due a tick must come to count as a
// pause of the process: a timer of a running process is late by
// microseconds, a loaded machine's by milliseconds.
const pauseMin = 2 * time.Second

// pauseClock notices that the process did not run (SIGSTOP, a frozen
// container, a starved CPU share): its timer, due every pauseTick, fires
// that much later, as the monotonic clock counts while the process is
// stopped (the JVM's and Cassandra's pause warnings work the same way).
// One timer per registry (time.AfterFunc, re-armed at each tick: no
// goroutine between ticks), started with the registry's first connection
// and stopped by Close. The connection-lost Warn says how long the
// process did not run since ZooKeeper was last heard (pausedSince), so
// that a loss caused by the process itself reads as such. Safe for
// concurrent use.
type pauseClock struct {
	mu      sync.Mutex
	t       *time.Timer
	last    time.Time     // the last tick (or the start)
	pause   time.Duration // the last pause: how much later than due its tick came
	ended   time.Time     // when that pause ended (its late tick)
	stopped bool
}

// start arms the timer; a second start, or one after stop, does nothing.
func (c *pauseClock) start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.t != nil || c.stopped {
		return
	}
	c.last = time.Now()
	c.t = time.AfterFunc(pauseTick, c.fire)
}

// fire is the timer's tick: it notes a pause and re-arms the timer.
func (c *pauseClock) fire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return
	}
	c.tick(time.Now())
	c.t.Reset(pauseTick)
}

// tick notes a tick at now: one that comes pauseMin or more later than
// due (last + pauseTick) records a pause of that lateness, ended now.
// Caller holds c.mu.
func (c *pauseClock) tick(now time.Time) {
	if late := now.Sub(c.last) - pauseTick; late >= pauseMin {
		c.pause, c.ended = late, now
	}
	c.last = now
}

// stop stops the timer; a tick running now does not re-arm it.
func (c *pauseClock) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	if c.t != nil {
		c.t.Stop()
	}
}

// resumeReadWindow is how long before ZooKeeper was last heard a pause
// may have ended and still count for a loss: a resumed process first
// reads what the server sent while it was stopped, which makes ZooKeeper
// "heard" a few milliseconds after the pause's late tick (seen in CI:
// last_heard_ago 1ms after a 6 s SIGSTOP, and the pause not named).
const resumeReadWindow = time.Second

// pausedSince returns how long the process did not run in its last
// pause, when that pause ended after since (ZooKeeper's last contact)
// less resumeReadWindow: the one its timer has noted, or the one ending
// now, whose late tick has not run yet (a process resumed runs its
// goroutines in any order). 0 when there was no such pause, or before
// start.
func (c *pauseClock) pausedSince(since, now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last.IsZero() {
		return 0
	}
	if late := now.Sub(c.last) - pauseTick; late >= pauseMin {
		return late // ending now
	}
	if c.pause > 0 && c.ended.After(since.Add(-resumeReadWindow)) {
		return c.pause
	}
	return 0
}
