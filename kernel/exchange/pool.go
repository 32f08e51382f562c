package exchange

import (
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// task is one request for a worker.
type task struct {
	c     *Channel
	h     protocol.Header
	codec spi.Codec
	body  []byte

	arrived int64 // mono() when the reader handed it over (0: when it runs): the consumer's deadline counts from here

	// set by the worker pool for a request that waits in its queue
	queued  int64 // mono() when it joined the queue: arrived, or when unstall put it back after it was parked
	bound   int64 // how long it may wait there (queueWaitBound); 0: no bound
	refused int64 // not 0: refused unrun with SERVER_THREADPOOL_EXHAUSTED (Channel.refusal), after waiting this long (> 0) or at once, the queue's head having waited -refused
	notRun  bool  // taken out of the queue unstarted at shutdown (workerPool.purge): answered NotRunAnswer

	small int8 // Options.SmallAnswer's verdict once looked up (Channel.smallAnswer): 1 small, -1 not, 0 not yet
}

// queueWaitFraction and minQueueWait make a queued request's wait bound
// (queueWaitBound): a tenth of its timeout, at least 10 ms.
const (
	queueWaitFraction = 10
	minQueueWait      = int64(10 * time.Millisecond)
)

// queueWaitBound returns how long a request with body may wait in the
// worker pool's queue before it is refused unrun: a tenth of the timeout
// its consumer sent, at least minQueueWait; 0 (no bound) when it sent
// none or the body does not parse (handle answers that).
//
// A tenth leaves a request that starts within its bound nine tenths of
// its timeout to run in; a bound nearer the timeout would not do: under
// sustained overload the queue holds about a bound's worth of requests,
// so each request that runs has waited nearly its bound (CoDel's
// observation: a standing queue's delay is its target's).
func queueWaitBound(body []byte) int64 {
	ms := protocol.RequestTimeoutMS(body) // the timeout alone: this runs under the pool's lock
	if ms == 0 {
		return 0
	}
	return max(int64(time.Duration(ms)*time.Millisecond)/queueWaitFraction, minQueueWait)
}

// workerIdle is how long a provider worker waits for the next request
// before it exits (between one and two times this, in practice).
const workerIdle = 2 * time.Second

// workerPool runs provider requests on at most max goroutines (Options.Workers),
// shared by the channels of one Server; a provider Channel made by
// NewChannel has a pool of its own. A request goes to an idle worker if one
// is waiting, else to a new worker while fewer than max run, else into a
// FIFO queue the workers drain before they wait again. submit never
// blocks, so the reader that calls it keeps reading heartbeats and
// responses however slow the handlers are.
//
// The queue admits a request only while it drains fast enough for it:
// a request may wait there a tenth of its timeout (queueWaitBound). One
// that finds the queue's oldest request waiting longer than its own bound
// is refused at once, and one that is still queued when its bound passes
// is refused when a worker takes it; both are answered
// SERVER_THREADPOOL_EXHAUSTED unrun (Channel.refusal), which the consumer
// retries with backoff. Dubbo's fixed pool refuses when no thread is free
// (AbortPolicyWithReport); the queue here absorbs bursts that drain
// within the bound (thousands of quick calls read in one batch), and a
// sustained overload fails fast instead of queueing without bound and
// running requests whose consumers time out while they run (600 callers
// of a 500 ms method with a 1 s timeout: 25 % of the pool's capacity
// succeeded, the rest SERVER_TIMEOUT).
//
// Idle workers wait on a channel of their own, in a stack: the most
// recently idle is reused first (its stack is grown and in cache), and a
// hand-off is one channel send to one receiver, not a select over shared
// channels (which cost the provider 15 % of its CPU at 100 callers). A
// reaper ticking every workerIdle retires the workers that stayed idle for
// a whole tick, from the bottom of the stack.
type workerPool struct {
	max int

	mu      sync.Mutex
	workers int            // running workers
	idle    []*poolWorker  // waiting workers, most recently idle last
	queue   []task         // requests waiting for a worker, from head on
	head    int            //
	epoch   uint64         // reaper ticks so far
	reaper  *time.Timer    // nil while no worker runs
	closed  bool           //
	wg      sync.WaitGroup // running workers
	dog     watchdog       // Options.Adaptive: the requests running on the channels' readers

	// unstarted counts the requests that joined the queue and no worker
	// took: queued minus started. One that purge took out stays counted
	// (it never ran), so after Server.Shutdown this is how many of the
	// requests in flight at its go-away never started.
	unstarted atomic.Int64
}

// poolWorker is one idle worker's mailbox.
type poolWorker struct {
	tasks chan task // cap 1; a zero task tells the worker to exit
	epoch uint64    // the pool's epoch when it last went idle
}

// newWorkerPool returns a pool of at most workers goroutines: 0 means
// DefaultWorkers, negative unbounded.
func newWorkerPool(workers int) *workerPool {
	switch {
	case workers == 0:
		workers = DefaultWorkers
	case workers < 0:
		workers = math.MaxInt
	}
	return &workerPool{max: workers}
}

// submit runs t on a worker, now or once one is free. It never blocks.
// Not to be called after close (after stop it still runs t).
func (p *workerPool) submit(t task) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		w.tasks <- t // never blocks: the worker is waiting and the channel empty
		return
	}
	if p.workers < p.max {
		p.workers++
		p.wg.Add(1)
		if p.reaper == nil {
			p.reaper = time.AfterFunc(workerIdle, p.reap)
		}
		p.mu.Unlock()
		go p.worker(t)
		return
	}
	t.bound = queueWaitBound(t.body)
	if t.queued == 0 { // not put back by unstall: the reader read the clock as it handed t over
		t.queued = t.arrived
	}
	if t.queued == 0 {
		t.queued = mono()
	}
	if p.head < len(p.queue) && t.bound > 0 {
		if w := t.queued - p.queue[p.head].queued; w > t.bound {
			p.mu.Unlock()
			t.refused = -w
			t.c.refuseQueued(t)
			return
		}
	}
	p.queue = append(p.queue, t)
	p.unstarted.Add(1)
	p.mu.Unlock()
}

// popLocked takes the queue's head. On mu, with the queue not empty; the
// caller marks it late (task.late) once it has let go of mu.
func (p *workerPool) popLocked() task {
	t := p.queue[p.head]
	p.queue[p.head] = task{}
	p.unstarted.Add(-1)
	if p.head++; p.head == len(p.queue) {
		p.queue, p.head = p.queue[:0], 0
	}
	return t
}

// late marks t refused when it waited in the queue past its bound (read
// off the pool's lock: a clock read per queued request).
func (t *task) late() {
	if t.bound > 0 {
		if w := mono() - t.queued; w > t.bound {
			t.refused = w
		}
	}
}

// worker runs t, then queued requests and requests handed to it while
// idle, until the reaper or close tells it to exit.
func (p *workerPool) worker(t task) {
	exited := false
	defer func() {
		if !exited {
			p.replace() // runtime.Goexit in a handler (run answered it)
		}
		p.wg.Done()
	}()
	w := &poolWorker{tasks: make(chan task, 1)}
	for {
		t.c.runQueued(t)
		p.mu.Lock()
		if p.head < len(p.queue) {
			t = p.popLocked()
			p.mu.Unlock()
			t.late()
			continue
		}
		if p.closed {
			p.workers--
			p.mu.Unlock()
			exited = true
			return
		}
		w.epoch = p.epoch
		p.idle = append(p.idle, w)
		p.mu.Unlock()
		if t = <-w.tasks; t.c == nil {
			exited = true
			return // retired: the sender counted it out
		}
	}
}

// replace stands in for a worker whose handler called runtime.Goexit,
// ending its goroutine: a new worker takes the next queued request, or the
// pool counts one worker fewer.
func (p *workerPool) replace() {
	p.mu.Lock()
	if p.head < len(p.queue) {
		t := p.popLocked()
		p.wg.Add(1)
		p.mu.Unlock()
		t.late()
		go p.worker(t)
		return
	}
	p.workers--
	p.mu.Unlock()
}

// reap retires the workers idle since before the previous tick and re-arms
// itself while workers run.
func (p *workerPool) reap() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.epoch++
	n := 0 // the oldest idle workers come first
	for n < len(p.idle) && p.idle[n].epoch+1 < p.epoch {
		p.idle[n].tasks <- task{}
		n++
	}
	if n > 0 {
		p.workers -= n
		p.idle = append(p.idle[:0], p.idle[n:]...)
		clear(p.idle[len(p.idle):cap(p.idle)])
	}
	if p.workers > 0 {
		p.reaper.Reset(workerIdle)
	} else {
		p.reaper = nil
	}
}

// close stops the workers (stop) and waits for them. Every channel using
// the pool must have finished first (Channel.Wait), so nothing is queued.
// Idempotent.
func (p *workerPool) close() {
	p.stop()
	p.wg.Wait()
	p.dog.wait()
}

// stop retires the idle workers now and makes each busy one exit once its
// handler has returned and the queue is empty, without waiting for them:
// a server whose channels are closing (Server.closeAll), or a channel
// with a pool of its own that died, leaves behind only the goroutines
// running handlers that ignore their context (each ending when its
// handler returns), not idle workers until the reaper's next ticks (2 to
// 4 s). A request submitted after it still runs, on a worker that then
// exits. Idempotent.
func (p *workerPool) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.reaper != nil {
		p.reaper.Stop()
		p.reaper = nil
	}
	for _, w := range p.idle {
		w.tasks <- task{}
	}
	p.workers -= len(p.idle)
	p.idle = nil
}

// purge takes every request out of the queue, marked notRun, for the
// caller to answer (Channel.refuseQueued): Server.Shutdown, whose
// channels close while a handler that ignores its context holds the
// worker they wait for. They stay counted in unstarted.
func (p *workerPool) purge() []task {
	p.mu.Lock()
	defer p.mu.Unlock()
	ts := slices.Clone(p.queue[p.head:])
	clear(p.queue)
	p.queue, p.head = p.queue[:0], 0
	for i := range ts {
		ts[i].notRun = true
	}
	return ts
}

// queuedLen returns the number of requests waiting for a worker.
func (p *workerPool) queuedLen() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.queue) - p.head
}

// refuseQueued answers t, which the pool refused at once (its queue's
// head had waited past t's bound) or took out of its queue unstarted
// (purge), from the goroutine that submitted or purged it: the answer is
// small and run does not wait for room to queue it.
func (c *Channel) refuseQueued(t task) {
	if c.queuedIn.Add(-queuedSize(t)) < lowWater && c.inStalled.Load() {
		c.wakeQueued(false)
	}
	c.run(t)
}

// refusal is the answer to t, a request the worker pool refused
// (task.refused): SERVER_THREADPOOL_EXHAUSTED, unrun, counted in
// counters.Access.WorkersRejections and logged at Warn, rate-bounded; or
// SERVER_TIMEOUT when its consumer's deadline passed meanwhile, as handle
// answers then.
func (c *Channel) refusal(t task) spi.Result {
	p, _, err := protocol.ParseRequestPreamble(t.body)
	if err != nil { // queueWaitBound parsed it: not reached
		counters.Provider.BadRequest.Inc()
		return spi.Result{Err: spi.Errorf(spi.StatusBadRequest, "exchange: bad request body: %v", err)}
	}
	timeout := time.Duration(p.TimeoutMS) * time.Millisecond
	now := mono()
	if t.arrived != 0 && now-t.arrived >= int64(timeout) {
		return c.expiredWaiting(string(p.Service), string(p.Method), timeout, now-t.arrived)
	}
	counters.Access.WorkersRejections.Inc()
	workers := c.pool.max
	var msg string
	if t.refused > 0 {
		msg = fmt.Sprintf("exchange: %s.%s waited %v for a worker, over a tenth of its %v timeout (all %d of the provider's workers busy); not run",
			p.Service, p.Method, time.Duration(t.refused).Round(time.Millisecond), timeout, workers)
	} else {
		msg = fmt.Sprintf("exchange: all %d of the provider's workers are busy and its oldest queued request has waited %v, over a tenth of the %v timeout of %s.%s; not run",
			workers, time.Duration(-t.refused).Round(time.Millisecond), timeout, p.Service, p.Method)
	}
	c.logLimited(slog.LevelWarn, "workers busy", "worker pool: refusing requests (SERVER_THREADPOOL_EXHAUSTED): every worker busy and the queue not draining within a tenth of their timeout",
		"workers", workers, "service", string(p.Service), "method", string(p.Method))
	return spi.Result{Err: spi.Errorf(spi.StatusServerThreadpoolExhausted, "%s", msg)}
}
