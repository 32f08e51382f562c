// Package push delivers provider lists to one subscriber: from one goroutine,
// in order, never blocking the registry that produced them. Lists pushed while
// the subscriber is busy are coalesced (only the newest is delivered, which is
// enough because every list is complete), and a list equal to the last one
// delivered is dropped. Shared by the bundled registries.
package push

import (
	"context"
	"slices"
	"sort"
	"sync"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/spi"
)

// Pusher owns the goroutine that calls one NotifyFunc. Safe for concurrent
// use; Stop is idempotent and waits for the goroutine.
type Pusher struct {
	notify spi.NotifyFunc

	mu       sync.Mutex
	pending  []spi.URL
	has      bool
	queued   uint64        // lists Push was given
	handled  uint64        // of those, delivered (notify returned) or dropped
	progress chan struct{} // closed and replaced when handled grows

	wake     chan struct{}
	quit     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

// New starts a Pusher delivering to notify.
func New(notify spi.NotifyFunc) *Pusher {
	p := &Pusher{
		notify:   notify,
		progress: make(chan struct{}),
		wake:     make(chan struct{}, 1),
		quit:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	go p.loop()
	return p
}

// Push queues list (which Push sorts by canonical string; the caller must not
// use it afterwards) for delivery. It never blocks.
func (p *Pusher) Push(list []spi.URL) {
	Sort(list)
	p.mu.Lock()
	p.pending, p.has = list, true
	p.queued++
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Stop ends delivery and waits until notify is no longer running. It must not
// be called from inside notify.
func (p *Pusher) Stop() {
	p.stopOnce.Do(func() { close(p.quit) })
	<-p.done
}

func (p *Pusher) loop() {
	defer close(p.done)
	var last []spi.URL
	first := true
	for {
		select {
		case <-p.quit:
			return
		case <-p.wake:
		}
		p.mu.Lock()
		list, has, seq := p.pending, p.has, p.queued
		p.pending, p.has = nil, false
		p.mu.Unlock()
		if !has || (!first && Equal(list, last)) {
			p.handledUpTo(seq)
			continue
		}
		select {
		case <-p.quit:
			return
		default:
		}
		first = false
		last = list
		if list == nil {
			list = []spi.URL{}
		}
		counters.Registry.Notifications.Inc()
		p.notify(slices.Clone(list))
		p.handledUpTo(seq)
	}
}

// handledUpTo records that every list pushed up to seq has been handled
// and wakes Wait.
func (p *Pusher) handledUpTo(seq uint64) {
	p.mu.Lock()
	if seq > p.handled {
		p.handled = seq
		close(p.progress)
		p.progress = make(chan struct{})
	}
	p.mu.Unlock()
}

// Wait blocks until every list pushed before the call has been delivered
// (notify returned) or dropped (coalesced, or equal to the one delivered
// before), and reports true; or until ctx ends or the Pusher stops, and
// reports false. A registry whose Register and Unregister change its own
// process's subscribers waits so, so that a consumer of the same process
// lists a provider once its Export has returned. It must not be called
// from inside notify (it would wait for itself until ctx ends).
func (p *Pusher) Wait(ctx context.Context) bool {
	p.mu.Lock()
	target := p.queued
	p.mu.Unlock()
	for {
		p.mu.Lock()
		if p.handled >= target {
			p.mu.Unlock()
			return true
		}
		ch := p.progress
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		case <-p.done:
			return false
		}
	}
}

// Sort orders urls by canonical string, in place. Each URL's string is
// built once (building both in every comparison made a sort of n entries
// cost 2n log n builds: most of registry ls's time on ZooKeeper).
func Sort(urls []spi.URL) {
	strs := make([]string, len(urls))
	for i, u := range urls {
		strs[i] = u.String()
	}
	sort.Sort(byString{urls, strs})
}

// byString sorts urls by strs, their canonical strings.
type byString struct {
	urls []spi.URL
	strs []string
}

func (b byString) Len() int           { return len(b.urls) }
func (b byString) Less(i, j int) bool { return b.strs[i] < b.strs[j] }
func (b byString) Swap(i, j int) {
	b.urls[i], b.urls[j] = b.urls[j], b.urls[i]
	b.strs[i], b.strs[j] = b.strs[j], b.strs[i]
}

// Equal reports whether two sorted lists hold equal URLs.
func Equal(a, b []spi.URL) bool {
	return slices.EqualFunc(a, b, func(x, y spi.URL) bool { return x.Equal(y) })
}
