// Package push delivers provider lists to one subscriber: from one goroutine,
// in order, never blocking the registry that produced them. Lists pushed while
// the subscriber is busy are coalesced (only the newest is delivered, which is
// enough because every list is complete), and a list equal to the last one
// delivered is dropped. Shared by the bundled registries.
package push

import (
	"slices"
	"strings"
	"sync"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/spi"
)

// Pusher owns the goroutine that calls one NotifyFunc. Safe for concurrent
// use; Stop is idempotent and waits for the goroutine.
type Pusher struct {
	notify spi.NotifyFunc

	mu      sync.Mutex
	pending []spi.URL
	has     bool

	wake     chan struct{}
	quit     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

// New starts a Pusher delivering to notify.
func New(notify spi.NotifyFunc) *Pusher {
	p := &Pusher{
		notify: notify,
		wake:   make(chan struct{}, 1),
		quit:   make(chan struct{}),
		done:   make(chan struct{}),
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
		list, has := p.pending, p.has
		p.pending, p.has = nil, false
		p.mu.Unlock()
		if !has || (!first && Equal(list, last)) {
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
	}
}

// Sort orders urls by canonical string, in place.
func Sort(urls []spi.URL) {
	slices.SortFunc(urls, func(a, b spi.URL) int { return strings.Compare(a.String(), b.String()) })
}

// Equal reports whether two sorted lists hold equal URLs.
func Equal(a, b []spi.URL) bool {
	return slices.EqualFunc(a, b, func(x, y spi.URL) bool { return x.Equal(y) })
}
