package exchange

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// task is one request for a worker.
type task struct {
	c     *Channel
	h     protocol.Header
	codec spi.Codec
	body  []byte
}

// workerIdle is how long a provider worker waits for the next request
// before it exits.
const workerIdle = 2 * time.Second

// workerPool runs provider requests on at most max goroutines (Options.Workers),
// shared by the channels of one Server; a provider Channel made by
// NewChannel has a pool of its own. A request goes to an idle worker if one
// is waiting, else to a new worker while fewer than max run, else into a
// FIFO queue the workers drain before they wait again (Dubbo's fixed thread
// pool with an unbounded queue, except that each connection's share of the
// queue is bounded by Options.MaxConcurrent). submit never blocks, so the
// reader that calls it keeps reading heartbeats and responses however slow
// the handlers are.
//
// Workers are reused for up to workerIdle of idleness: the idle timer is not
// reset per request (that costs a clock read and the timer lock every time);
// when it fires, a worker that served anything since the last tick re-arms
// it, an idle one exits.
type workerPool struct {
	max   int
	tasks chan task     // unbuffered: hands a request to an idle worker
	wake  chan struct{} // cap 1: the queue got a request
	quit  chan struct{} // closed by close

	mu      sync.Mutex
	workers int    // running workers, on mu
	queue   []task // requests waiting for a worker, from head on; on mu
	head    int
	queued  atomic.Int64 // len(queue) - head, read without mu

	wg        sync.WaitGroup
	closeOnce sync.Once
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
	return &workerPool{max: workers, tasks: make(chan task), wake: make(chan struct{}, 1), quit: make(chan struct{})}
}

// submit runs t on a worker, now or once one is free. It never blocks.
// Not to be called after close.
func (p *workerPool) submit(t task) {
	select {
	case p.tasks <- t: // an idle worker takes it
		return
	default:
	}
	p.mu.Lock()
	if p.workers < p.max {
		p.workers++
		p.wg.Add(1)
		p.mu.Unlock()
		go p.worker(t)
		return
	}
	p.queue = append(p.queue, t)
	p.queued.Add(1)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default: // a wake-up is pending already
	}
}

// next pops the oldest queued request, or returns a zero task.
func (p *workerPool) next() task {
	if p.queued.Load() == 0 {
		return task{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.head == len(p.queue) {
		return task{}
	}
	t := p.queue[p.head]
	p.queue[p.head] = task{}
	p.head++
	p.queued.Add(-1)
	if p.head == len(p.queue) {
		p.queue, p.head = p.queue[:0], 0
	}
	return t
}

// retire lets an idle worker exit unless requests are queued.
func (p *workerPool) retire() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.head < len(p.queue) {
		return false
	}
	p.workers--
	return true
}

// worker runs t, then queued requests and requests handed over on tasks,
// until it has been idle for workerIdle or the pool closes.
func (p *workerPool) worker(t task) {
	defer p.wg.Done()
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for served := true; ; {
		if t.c != nil {
			t.c.run(t)
			served = true
		}
		if t = p.next(); t.c != nil {
			continue
		}
		select {
		case t = <-p.tasks:
		case <-p.wake: // the loop pops it
		case <-idle.C:
			if !served && p.retire() {
				return
			}
			served = false
			idle.Reset(workerIdle)
		case <-p.quit:
			return
		}
	}
}

// close stops the workers and waits for them. Every channel using the pool
// must have finished first (Channel.Wait), so nothing is queued. Idempotent.
func (p *workerPool) close() {
	p.closeOnce.Do(func() { close(p.quit) })
	p.wg.Wait()
}
