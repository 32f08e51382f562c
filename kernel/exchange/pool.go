package exchange

import (
	"math"
	"sync"
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

	arrived int64 // mono() when the reader handed it over (0: when it runs): the consumer's deadline counts from here
}

// workerIdle is how long a provider worker waits for the next request
// before it exits (between one and two times this, in practice).
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
// Not to be called after close.
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
	p.queue = append(p.queue, t)
	p.mu.Unlock()
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
			t = p.queue[p.head]
			p.queue[p.head] = task{}
			if p.head++; p.head == len(p.queue) {
				p.queue, p.head = p.queue[:0], 0
			}
			p.mu.Unlock()
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
		t := p.queue[p.head]
		p.queue[p.head] = task{}
		if p.head++; p.head == len(p.queue) {
			p.queue, p.head = p.queue[:0], 0
		}
		p.wg.Add(1)
		p.mu.Unlock()
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

// close stops the workers and waits for them. Every channel using the pool
// must have finished first (Channel.Wait), so nothing is queued. Idempotent.
func (p *workerPool) close() {
	p.mu.Lock()
	if !p.closed {
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
	p.mu.Unlock()
	p.wg.Wait()
	p.dog.wait()
}

// queuedLen returns the number of requests waiting for a worker.
func (p *workerPool) queuedLen() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.queue) - p.head
}
