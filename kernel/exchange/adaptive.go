package exchange

import (
	"errors"
	"time"
)

// Options.Adaptive: provider requests run on the connection's reader
// (no goroutine hand-off, responses of a read batch written together)
// until one runs too long; then the reader's job, not the request, moves
// to a new goroutine. The Go runtime does the same with a goroutine that
// stays in a system call: sysmon retakes its processor (runtime/proc.go,
// retake) and another thread runs the rest.
//
// The running request is marked by inline, the mono() time it started.
// A per-channel timer, armed while a request runs inline, checks it: past
// handOffAfter the timer claims the mark (compare-and-swap to 0), releases
// the batch's held responses, starts a new goroutine on the same reader
// state and passes it the reader's count of c.io. The old goroutine sees
// its own compare-and-swap fail when the request returns, sends the
// response like a worker would, and exits. Both sides of the claim are one
// compare-and-swap, so exactly one goroutine owns the reader at any time.

// handOffAfter is how long a request (or a read batch) may run on the
// reader before the connection's reading moves to another goroutine (a
// request) or its later requests go to the worker pool (a batch). It bounds
// how long a slow handler holds up the requests and heartbeats behind it on
// its connection; a request that runs this long costs far more than the
// ~1 µs hand-off.
const handOffAfter = int64(time.Millisecond)

// poolAfterHandOff is how long a connection sends its requests to the
// worker pool after a hand-off, before running them on the reader again: a
// service whose handlers block costs one hand-off a second per connection,
// and otherwise runs as dispatcher=all does.
const poolAfterHandOff = int64(time.Second)

// quietAfter is how long a connection must go without a read batch for
// its next batch to go to the worker pool instead of the reader: a call
// run on the reader grows the reader's stack to the handler's depth, and a
// connection that makes a call now and then would keep that stack (4 KiB
// per idle connection, 17.8 -> 21.9 KiB with 10,000 tcp connections) for
// a hand-off it does not need.
const quietAfter = int64(time.Second)

// errHandedOff ends the reader goroutine whose request was handed off.
var errHandedOff = errors.New("exchange: reader handed off")

// monoEpoch anchors mono.
var monoEpoch = time.Now()

// mono returns monotonic nanoseconds since process start (never 0 after
// the first nanosecond).
func mono() int64 { return int64(time.Since(monoEpoch)) }

// runInline runs t on the reader (Options.Adaptive), or submits it to the
// worker pool when the connection was quiet before this read batch
// (quietAfter), handed off less than poolAfterHandOff ago, or the current
// read batch has run handOffAfter already. It returns errHandedOff when
// the request was handed off while it ran.
func (r *reader) runInline(t task) error {
	c := r.c
	now := mono()
	if !r.warm || now < c.poolUntil.Load() || now-r.batch >= handOffAfter {
		t.arrived = now
		c.pool.submit(t)
		return nil
	}
	c.inline.Store(now)
	c.armInline()
	t.arrived = now
	c.run(t)
	if !c.inline.CompareAndSwap(now, 0) {
		return errHandedOff
	}
	return nil
}

// armInline sets the inline timer unless it is set already. The reader
// stores inline before it looks at inlineArmed, and checkInline clears
// inlineArmed before it looks at inline again, so a request never runs
// unwatched.
func (c *Channel) armInline() {
	if c.inlineArmed.Load() || !c.inlineArmed.CompareAndSwap(false, true) {
		return
	}
	c.inlineTimer.Reset(time.Duration(handOffAfter))
}

// checkInline runs on the inline timer: it hands off a request that has
// run handOffAfter on the reader, sets the timer again for one that has
// not, and disarms when none runs there.
func (c *Channel) checkInline() {
	for {
		s := c.inline.Load()
		if s == 0 {
			c.inlineArmed.Store(false)
			if c.inline.Load() == 0 || !c.inlineArmed.CompareAndSwap(false, true) {
				return // idle, or the reader armed the timer again
			}
			continue
		}
		now := mono()
		if wait := s + handOffAfter - now; wait > 0 {
			c.inlineTimer.Reset(time.Duration(wait))
			return
		}
		if c.inline.CompareAndSwap(s, 0) {
			c.handOff(now)
			c.inlineArmed.Store(false)
			return
		}
		// the request ended meanwhile: look at the next one
	}
}

// handOff moves the primary reader to a new goroutine; the old one is
// running a request and will exit when it returns.
func (c *Channel) handOff(now int64) {
	c.handOffs.Add(1)
	c.poolUntil.Store(now + poolAfterHandOff)
	r := c.rd
	if r.held {
		// the responses of the batch so far go out now
		r.held = false
		c.w.hold(false)
	}
	c.goMu.Lock()
	if !c.goClosed {
		c.io.Add(1)
		go c.read(r)
	}
	c.goMu.Unlock()
	c.io.Done() // the old reader's count: it is running a handler now, which Close does not wait for
	c.log.Debug("request ran past the hand-off bound: reader moved to a new goroutine", "after", time.Duration(handOffAfter))
}
