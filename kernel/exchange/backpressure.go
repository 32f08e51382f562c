package exchange

import (
	"fmt"
	"log/slog"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/kernel/protocol"
)

// Write-side backpressure (tester17 finding 1). A provider kept reading
// the requests of a consumer that read none of its answers, queueing the
// answers without bound (1 GB in 8 s). Now, while the bytes a channel has
// queued or is writing for its peer (writer.unsent: the writer's buffer,
// its sealed batches, the batch being written, and the answers waiting in
// a goroutine of their own for room or for a stream of their own) are at
// or over highWater, the channel's readers read no new frame, and the
// worker pool runs none of its queued requests (they are parked, costing
// their request body only); both go on once the bytes fall under
// lowWater. This is Netty's channel writability (Dubbo runs on it: a high
// and a low water mark, 64 and 32 KiB there) applied to reading, as
// gRPC-Go stops reading a transport while too many control frames are
// queued (maxQueuedTransportResponseFrames, the fix for CVE-2019-9512 and
// CVE-2019-9515). A consumer that does not read thus pins about highWater
// plus the answers of the handlers that were already running (each at most
// payload), and the rest of the provider goes on serving other consumers.
// Heartbeat answers, refusals (SERVER_THREADPOOL_EXHAUSTED, BAD_REQUEST)
// and not-run answers count like any other answer.
//
// A reader that reads costs one atomic load per frame for it. A stopped
// reader still ends with its channel (Close, the heartbeat's verdict on a
// channel with nothing read or written for heartbeat.timeout, Server
// shutdown), and reads again once its session is done (spi.Session.Done:
// the peer closed or the connection failed), to find the end; while it is
// stopped, a go-away's ping goes unanswered and
// Shutdown waits for it no longer than before (goAwayAckWait).
//
// highWater is the default payload (8 MiB), not the writer's maxQueued
// (4 MiB): at 4 MiB, one 4 MiB answer on its way to a consumer that reads
// it stopped the reader until it was written, and the small calls behind
// it on that connection waited (BenchmarkMixedLargeSmall: p99 6.6 ms ->
// 15 ms on smux, mean x2 on one stream).
const (
	highWater = 8 << 20       // stop reading at or over it
	lowWater  = highWater / 2 // read again under it
)

// overHighWater reports whether the peer has highWater bytes or more
// unsent: one atomic load.
func (c *Channel) overHighWater() bool { return c.w.unsent.Load() >= highWater }

// sent counts n bytes of the peer's that were written (or dropped) and,
// once fewer than lowWater remain, lets stalled readers and parked
// requests go on.
func (c *Channel) sent(n int) {
	if c.w.unsent.Add(-int64(n)) < lowWater && c.stalled.Load() {
		c.unstall(false)
	}
}

// resumeBatch bounds the parked requests one unstall puts back in the
// worker pool's queue, which every channel of the server shares: putting
// back thousands at once (a consumer that reads nothing and asked for
// 10,000 answers) queued them ahead of other consumers' requests each time
// its answers drained. The rest follow as these end (runQueued) or the
// next answers drain; the channel's death puts back all of them.
const resumeBatch = 64

// unstall ends a stall episode, if fewer than lowWater bytes are unsent or
// force (the channel died): it wakes the stalled readers and puts parked
// requests back in the worker pool, resumeBatch of them (all with force:
// they find the channel dead and end). The episode goes on while requests
// stay parked.
func (c *Channel) unstall(force bool) {
	c.stallMu.Lock()
	if !c.stalled.Load() || !force && c.w.unsent.Load() >= lowWater {
		c.stallMu.Unlock()
		return
	}
	if c.stallCh != nil {
		close(c.stallCh)
		c.stallCh = nil
	}
	n := len(c.parked)
	if !force {
		n = min(n, resumeBatch)
	}
	resume := make([]task, n)
	copy(resume, c.parked)
	clear(c.parked[:n])
	if c.parked = c.parked[n:]; len(c.parked) == 0 {
		c.parked = nil
		c.stalled.Store(false)
	}
	c.nParked.Store(int64(len(c.parked)))
	c.stallMu.Unlock()
	for _, t := range resume {
		c.pool.submit(t)
	}
}

// startStallLocked marks the channel stalled and returns the channel
// closed when the episode ends, starting an episode (counted, logged at a
// bounded rate) if none runs. On stallMu.
func (c *Channel) startStallLocked() chan struct{} {
	c.stalled.Store(true) // before the caller looks at unsent again: see sent
	if c.stallCh == nil {
		c.stallCh = make(chan struct{})
		c.stalls.Add(1)
		counters.Channels.Stalls.Inc()
		unsent := c.w.unsent.Load()
		c.logLimited(slog.LevelInfo, "stalled", fmt.Sprintf("stopped reading from %s: %.1f MiB of answers unread (the consumer does not read them; reading again under %s)",
			c.remote, float64(unsent)/(1<<20), protocol.FormatSize(lowWater)), "unsent_bytes", unsent)
	}
	return c.stallCh
}

// waitRoom stops reader r until fewer than lowWater bytes are unsent for
// the peer. Responses held for r's read batch (Options.Direct) are
// released first, or nothing would drain. It reports false when the
// channel died meanwhile.
func (c *Channel) waitRoom(r *reader) bool {
	if r.held {
		c.w.hold(false)
		r.held = false
	}
	c.stallMu.Lock()
	select {
	case <-c.dying:
		c.stallMu.Unlock()
		return false
	default:
	}
	ch := c.startStallLocked()
	if c.w.unsent.Load() < lowWater {
		// drained meanwhile: the sent that crossed lowWater may have
		// missed the stalled flag, so end the episode here
		c.stallMu.Unlock()
		c.unstall(false)
		return true
	}
	c.stallMu.Unlock()
	select {
	case <-ch:
		return true
	case <-c.sess.Done():
		// The connection failed or closed: reading again finds its end
		// after what is buffered (a blocked write may not notice it: a
		// smux stream waiting for its window does not).
		return true
	case <-c.dying:
		return false
	}
}

// park keeps t, a two-way request a worker was about to run, until the
// peer has room (unstall), and reports whether it did: not once the
// channel is dying, nor when the bytes fell under lowWater meanwhile.
func (c *Channel) park(t task) bool {
	c.stallMu.Lock()
	select {
	case <-c.dying:
		c.stallMu.Unlock()
		return false
	default:
	}
	c.startStallLocked()
	if c.w.unsent.Load() < lowWater {
		// drained meanwhile (see waitRoom): the caller runs it
		c.stallMu.Unlock()
		c.unstall(false)
		return false
	}
	c.parked = append(c.parked, t)
	c.nParked.Store(int64(len(c.parked)))
	c.stallMu.Unlock()
	return true
}

// runQueued runs t, a request a worker took from the pool, unless the
// peer has highWater bytes unsent: then t waits, parked, for room.
func (c *Channel) runQueued(t task) {
	if c.overHighWater() && t.h.TwoWay() && c.park(t) {
		return
	}
	if c.queuedIn.Add(-queuedSize(t)) < lowWater && c.inStalled.Load() {
		c.wakeQueued(false)
	}
	c.run(t)
	if c.nParked.Load() > 0 {
		// the next parked ones, if there is room (resumeBatch); parked
		// requests hold the channel alive, so its pool is still open
		c.unstall(false)
	}
}

// Requests read ahead (the inbound side). A reader hands requests to the
// worker pool as fast as they arrive; while their handlers lag (or are
// parked above), their bodies pile up in the pool's queue: 46 MiB of
// 32 KiB Echo requests from a consumer that read nothing, before its
// answers reached highWater. So a reader that has handed the pool
// highWater bytes of requests that have not started yet waits, before
// reading on, until they are under lowWater — as HTTP/2's connection
// flow-control window bounds what a server buffers for handlers that have
// not read it (gRPC-Go counts data consumed when the handler reads it).
// Parked requests count too; they start when the answers drain, which
// does not depend on this wait. It costs the reader one atomic add per
// request handed to the pool, nothing per frame.

// queuedSize is what t counts in Channel.queuedIn: its body and header.
func queuedSize(t task) int64 { return int64(len(t.body)) + protocol.HeaderLen }

// submit hands t to the worker pool and, when the requests handed over
// and not started reach highWater bytes, waits until they are under
// lowWater (or the channel dies, or its session is done).
func (r *reader) submit(t task) {
	c := r.c
	n := c.queuedIn.Add(queuedSize(t))
	c.pool.submit(t)
	if n < highWater {
		return
	}
	if r.held {
		c.w.hold(false)
		r.held = false
	}
	c.stallMu.Lock()
	select {
	case <-c.dying:
		c.stallMu.Unlock()
		return
	default:
	}
	c.inStalled.Store(true) // before looking at queuedIn again: see runQueued
	if c.inCh == nil {
		c.inCh = make(chan struct{})
	}
	ch := c.inCh
	if c.queuedIn.Load() < lowWater {
		c.stallMu.Unlock()
		c.wakeQueued(false)
		return
	}
	c.stallMu.Unlock()
	select {
	case <-ch:
	case <-c.sess.Done():
	case <-c.dying:
	}
}

// wakeQueued wakes the readers waiting in submit once fewer than lowWater
// bytes of requests wait for a worker, or at once with force (the channel
// died).
func (c *Channel) wakeQueued(force bool) {
	c.stallMu.Lock()
	if c.inStalled.Load() && (force || c.queuedIn.Load() < lowWater) {
		c.inStalled.Store(false)
		if c.inCh != nil {
			close(c.inCh)
			c.inCh = nil
		}
	}
	c.stallMu.Unlock()
}
