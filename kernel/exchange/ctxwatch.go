package exchange

import (
	"sync"
	"sync/atomic"
)

// ctxWatch spares the calls that share one long-lived context (a worker
// loop's, a server's lifetime context, airnode bench's) a select over their
// call and ctx.Done() each: a goroutine of the channel's watches that Done
// channel for all of them, and each call waits on its own done alone.
//
// A select registers the caller on every channel it waits for; with
// thousands of callers on one context, its Done channel's lock is taken by
// every call from both cores and its wait list links thousands of parked
// callers, so enqueueing and unlinking touch other callers' cold memory:
// at c=10,000 the select was a fifth of the consumer's CPU (selectgo and
// sellock in the profile, bench/README.md's eighteenth pass).
//
// A Done channel is watched after it was seen in promoteAfter sampled calls
// (one call in sampleEvery) with no other in between, so per-request
// contexts, each used by a call or two, keep the select and start nothing.
// At most maxWatched per channel; a watcher ends when its context is done
// (taking and cancelling the calls that waited on it) or the channel dies.
type ctxWatch struct {
	slots [maxWatched]atomic.Pointer[ctxWatcher]

	mu    sync.Mutex // candidate and promotion
	cand  <-chan struct{}
	candN int
}

// ctxWatcher watches one context's Done channel for a Channel.
type ctxWatcher struct {
	done <-chan struct{}
}

const (
	maxWatched   = 4
	sampleEvery  = 16
	promoteAfter = 8
)

// watching returns the watcher of done, or nil when done is not watched.
func (w *ctxWatch) watching(done <-chan struct{}) *ctxWatcher {
	for i := range w.slots {
		if x := w.slots[i].Load(); x != nil && x.done == done {
			return x
		}
	}
	return nil
}

// consider notes that a call of channel c waited on done with a select;
// after promoteAfter such notes in a row it starts watching done. Calls it
// for one call in sampleEvery; never blocks.
func (w *ctxWatch) consider(c *Channel, done <-chan struct{}) {
	if !w.mu.TryLock() {
		return
	}
	defer w.mu.Unlock()
	if w.cand != done {
		w.cand, w.candN = done, 1
		return
	}
	if w.candN++; w.candN < promoteAfter {
		return
	}
	w.cand, w.candN = nil, 0
	if w.watching(done) != nil {
		return
	}
	for i := range w.slots {
		if w.slots[i].Load() != nil {
			continue
		}
		x := &ctxWatcher{done: done}
		slot := &w.slots[i]
		slot.Store(x)
		if !c.goIO(func() { c.watchCtx(slot, x) }) {
			slot.Store(nil) // the channel is dying: its calls end anyway
		}
		return
	}
}

// watchCtx waits for x's context to be done, then stops watching it and
// cancels every call waiting on it; or for the channel's death, which
// takes every call itself.
func (c *Channel) watchCtx(slot *atomic.Pointer[ctxWatcher], x *ctxWatcher) {
	select {
	case <-x.done:
	case <-c.dying:
		slot.Store(nil)
		return
	}
	slot.Store(nil)
	// A call that found x before it was dropped and is added to the
	// pending table after this walk sees done closed itself (invoke).
	for i := range c.pending.shards {
		for _, cl := range c.pending.shards[i].takeWatching(x) {
			cl.cancelled = true
			cl.done <- struct{}{}
		}
	}
}

// takeWatching removes and returns the shard's calls that wait on x.
func (s *pendingShard) takeWatching(x *ctxWatcher) []*call {
	var out []*call
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, cl := range s.ring {
		if cl != nil && cl.watcher == x {
			out = append(out, cl)
			s.ring[i] = nil
			s.n--
		}
	}
	for id, cl := range s.over {
		if cl.watcher == x {
			out = append(out, cl)
			delete(s.over, id)
		}
	}
	return out
}
