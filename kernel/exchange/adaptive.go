package exchange

import (
	"errors"
	"sync"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/spi"
)

// Options.Adaptive: provider requests run on the connection's reader
// (no goroutine hand-off, responses of a read batch written together)
// until one runs too long; then the reader's job, not the request, moves
// to a new goroutine. The Go runtime does the same with a goroutine that
// stays in a system call: sysmon retakes its processor (runtime/proc.go,
// retake) and another thread runs the rest.
//
// The running request is marked by inline, the mono() time it started.
// The worker pool's watchdog checks it every 1 to 10 ms (watchPeriod,
// maxWatchPeriod): past
// handOffAfter the watchdog claims the mark (compare-and-swap to 0), releases
// the batch's held responses, starts a new goroutine on the same reader
// state and passes it the reader's count of c.io. The old goroutine sees
// its own compare-and-swap fail when the request returns, sends the
// response like a worker would, and exits. Both sides of the claim are one
// compare-and-swap, so exactly one goroutine owns the reader at any time.

// handOffAfter is how long a request (or a read batch) may run on the
// reader before the connection's reading moves to another goroutine (a
// request) or its later requests go to the worker pool (a batch). With
// the watchdog's period it bounds how long a slow handler holds up the
// requests and heartbeats behind it on its connection (1 to 11 ms); a
// request that runs this long costs far more than the ~1 µs hand-off.
const handOffAfter = int64(time.Millisecond)

// minPoolAfterHandOff and poolAfterHandOff bound how long a connection
// sends its requests to the worker pool after a hand-off, before running
// them on the reader again. The window starts at 10 ms and doubles with
// each hand-off that comes within four windows of the one before, up to
// 1 s; a hand-off after a longer calm starts again at 10 ms (TCP's
// retransmission timeout backs off the same way, RFC 6298 §5.5). A
// service whose handlers block reaches one hand-off a second per
// connection after seven, and otherwise runs as dispatcher=all does; a
// request that merely looked slow because the OS or the hypervisor
// stopped its thread for a millisecond costs 10 ms of the worker pool,
// not a second of it.
const (
	minPoolAfterHandOff = int64(10 * time.Millisecond)
	poolAfterHandOff    = int64(time.Second)
)

// nextPoolWindow returns the worker-pool window for a hand-off at now,
// given the previous hand-off's time (0 for none) and window.
func nextPoolWindow(now, last, window int64) int64 {
	if last == 0 || window == 0 || now-last >= 4*window {
		return minPoolAfterHandOff
	}
	return min(2*window, poolAfterHandOff)
}

// quietAfter is how long a connection must go without a read batch for
// its next batch to go to the worker pool instead of the reader: a call
// run on the reader grows the reader's stack to the handler's depth, and a
// connection that makes a call now and then would keep that stack (4 KiB
// per idle connection, 17.8 -> 21.9 KiB with 10,000 tcp connections) for
// a hand-off it does not need.
const quietAfter = int64(time.Second)

// errHandedOff ends the reader goroutine whose request was handed off.
var errHandedOff = errors.New("exchange: reader handed off")

// mono returns monotonic nanoseconds since process start (never 0 after
// the first nanosecond): spi.Mono, whose readings the kernel's layers
// share with the exchange (Channel.InvokeFrom, Request.Began).
func mono() int64 { return int64(spi.Mono()) }

// runInline runs t on the reader (Options.Adaptive), or submits it to the
// worker pool when the connection was quiet before this read batch
// (quietAfter), is within its worker-pool window after a hand-off
// (nextPoolWindow: 10 ms to 1 s), or the current
// read batch has run handOffAfter already, or the Server's budget has no
// room for its answer (takeBudget). It returns errHandedOff when
// the request was handed off while it ran.
func (r *reader) runInline(t task) error {
	c := r.c
	now := mono()
	if !r.warm || now < c.poolUntil.Load() || now-r.batch >= handOffAfter {
		switch {
		case !r.warm:
			counters.Dispatch.Quiet.Inc()
		case now-r.batch >= handOffAfter:
			counters.Dispatch.Batch.Inc()
		default:
			counters.Dispatch.Window.Inc()
		}
		t.arrived = now
		r.submit(t)
		return nil
	}
	var cost int64
	var slot bool
	if t.h.TwoWay() {
		// Counted in the Server's budget as on a worker (takeBudget): run
		// here uncounted, each connection that pipelined requests for
		// 8 MB answers and read none made one at a time past every bound,
		// several once handed off (tester68 F5). With no room, it waits
		// its turn on the worker pool, as it does while the channel holds
		// budgetFree over the limit (overFree; tester71 #1).
		// A request whose answer is known small (smallAnswer) counts
		// nothing, as on a worker.
		// Nor does it start ahead of the older requests parked on the
		// channel (parkBehind).
		ok := !c.overFree() && c.nParked.Load() == 0
		if ok && !c.smallAnswer(&t) {
			cost, slot, ok = c.takeBudget()
		}
		if !ok {
			t.arrived = now
			r.submit(t)
			return nil
		}
	}
	c.inline.Store(now)
	if !c.watched.Load() {
		c.pool.dog.watch(c)
	}
	t.arrived = now
	returned := false
	defer func() {
		// runtime.Goexit in the handler (run answered it): unless the
		// watchdog handed the reader off meanwhile, reading goes on in a
		// new goroutine
		if !returned && c.inline.CompareAndSwap(now, 0) {
			r.resume()
		}
	}()
	if cost > 0 {
		c.runAnswering(t, cost, slot)
		if c.nParked.Load() > 0 || c.stalled.Load() {
			// as runQueued: its requests parked by the Server's budget
			// may start now that this handler ended (budgetHolds), and
			// no wake of the budget's looks at them (wake)
			c.unstall(false)
		}
	} else {
		c.run(t)
	}
	returned = true
	if !c.inline.CompareAndSwap(now, 0) {
		return errHandedOff
	}
	return nil
}

// runDirect runs t on the reader (Options.Direct); when its handler calls
// runtime.Goexit, reading goes on in a new goroutine (resume).
func (r *reader) runDirect(t task) {
	returned := false
	defer func() {
		if !returned {
			r.resume()
		}
	}()
	r.c.run(t)
	returned = true
}

// watchPeriod is how often the watchdog looks at the requests running on
// readers while it finds one running: a request is then handed off between
// handOffAfter and handOffAfter+watchPeriod after it started. After checks
// that found none, the watchdog waits up to maxWatchPeriod, the bound for
// the first slow request after a run of quick ones: the requests that
// arrive behind it on its connection wait at most that long for a reader.
const (
	watchPeriod    = time.Millisecond
	maxWatchPeriod = 10 * time.Millisecond
)

// watchdog looks at the requests running on the readers of a worker
// pool's channels (Options.Adaptive) every watchPeriod and hands off those
// that have run handOffAfter. One goroutine serves every channel of the
// pool, and runs only while one of them has read in the last quietAfter (a
// timer per channel, set again for its requests, woke a thread a
// millisecond per connection).
//
// A reader stores Channel.inline before it looks at Channel.watched; the
// watchdog clears watched before it looks at inline again, so a request
// never runs unwatched.
type watchdog struct {
	mu      sync.Mutex
	watched []*Channel // the channels with watched set
	running bool       // the goroutine runs (or is about to)
	wg      sync.WaitGroup
}

// watch adds c to the channels the watchdog looks at, and starts its
// goroutine if it is not running.
func (d *watchdog) watch(c *Channel) {
	d.mu.Lock()
	if !c.watched.Load() {
		c.watched.Store(true)
		d.watched = append(d.watched, c)
		if !d.running {
			d.running = true
			d.wg.Add(1)
			go d.run()
		}
	}
	d.mu.Unlock()
}

// run checks every watchPeriod until no channel is watched. A check that
// finds no request running doubles the wait before the next, up to
// maxWatchPeriod, as the Go runtime's sysmon backs off from 20 µs to 10 ms
// when it finds nothing to retake. Each check wakes a thread: at one
// caller (a request running ~5 µs of every 100) checking every millisecond
// cost the provider ~7 µs of CPU per call (a tenth of it) over
// dispatcher=direct; at 10 ms, under one.
func (d *watchdog) run() {
	defer d.wg.Done()
	period := watchPeriod
	t := time.NewTimer(period)
	defer t.Stop()
	for range t.C {
		busy, more := d.check()
		if !more {
			return
		}
		if busy {
			period = watchPeriod
		} else {
			period = min(2*period, maxWatchPeriod)
		}
		t.Reset(period)
	}
}

// check hands off the requests that have run handOffAfter on their
// readers and stops watching the channels whose reader ended or went
// quietAfter without a read. busy reports a request running on a reader;
// more is false, with running cleared, when no channel is left.
func (d *watchdog) check() (busy, more bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := mono()
	wall := time.Now().UnixNano()
	keep := d.watched[:0]
	for _, c := range d.watched {
		if s := c.inline.Load(); s != 0 {
			busy = true
			if now-s >= handOffAfter && c.inline.CompareAndSwap(s, 0) {
				c.handOff(now)
			}
			keep = append(keep, c)
			continue
		}
		if c.readerDone.Load() || wall-c.lastRead.Load() >= quietAfter {
			c.watched.Store(false)
			if c.inline.Load() == 0 {
				continue
			}
			c.watched.Store(true) // a request started meanwhile
		}
		keep = append(keep, c)
	}
	clear(d.watched[len(keep):])
	d.watched = keep
	if len(keep) == 0 {
		d.running = false
		return false, false
	}
	return busy, true
}

// wait waits for the watchdog's goroutine: every channel of the pool must
// have finished first, so it ends within watchPeriod.
func (d *watchdog) wait() { d.wg.Wait() }

// handOff moves the primary reader to a new goroutine; the old one is
// running a request and will exit when it returns. The watchdog calls it,
// holding its mu: nothing here may wait on the peer.
func (c *Channel) handOff(now int64) {
	c.handOffs.Add(1)
	counters.Dispatch.HandOffs.Inc()
	c.poolWindow = nextPoolWindow(now, c.lastHandOff, c.poolWindow)
	c.lastHandOff = now
	c.poolUntil.Store(now + c.poolWindow)
	r := c.rd
	if r.held {
		// the responses of the batch so far go out now, from a writer
		// goroutine: the watchdog must not wait on one consumer's socket
		r.held = false
		c.w.release()
	}
	c.goMu.Lock()
	if !c.goClosed {
		c.io.Add(1)
		go c.read(r)
	}
	c.goMu.Unlock()
	c.io.Done() // the old reader's count: it is running a handler now, which Close does not wait for
	c.log().Debug("request ran past the hand-off bound: reader moved to a new goroutine", "after", time.Duration(handOffAfter))
}
