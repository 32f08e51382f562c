package cli

import (
	"context"
	"sync"
	"time"

	"github.com/airnode/airnode/kernel"
)

// connSampleEvery is how often a bench samples its reference's
// connections during the run (connWatch).
const connSampleEvery = 50 * time.Millisecond

// connWatch counts a bench reference's connections for the summary's
// connections_up (tester23 N5). Every first connection attempt has ended
// connect.timeout after the reference was made (settleAt: a dial and its
// first ping are bounded by it); from then on it samples the connections
// up every connSampleEvery and keeps the fewest. The count reported is
// the fewer of that and the connections up at the end of the run, so it
// is what the run had throughout, not what was up later: three
// concurrent benches of 64 connections against a provider at accepts=183
// each reported 64 of 64, because the one that finished first closed
// its connections while the others waited for theirs to settle, and
// their redials were accepted then.
type connWatch struct {
	ref      *kernel.Reference
	settleAt time.Time

	mu      sync.Mutex
	fewest  int
	sampled bool

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// watchConnections starts sampling ref's connections; call it as soon as
// ref is made, and end with connections or close.
func watchConnections(ref *kernel.Reference) *connWatch {
	d, err := ref.URL().Duration("connect.timeout", kernel.DefaultConnectTimeout)
	if err != nil || d <= 0 {
		d = kernel.DefaultConnectTimeout
	}
	w := &connWatch{ref: ref, settleAt: time.Now().Add(d), stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w
}

func (w *connWatch) run() {
	defer close(w.done)
	t := time.NewTicker(connSampleEvery)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		if time.Now().Before(w.settleAt) {
			continue
		}
		up, _ := w.ref.Connections()
		w.mu.Lock()
		if !w.sampled || up < w.fewest {
			w.fewest, w.sampled = up, true
		}
		w.mu.Unlock()
	}
}

// close stops the sampling and waits for it; idempotent.
func (w *connWatch) close() {
	w.once.Do(func() { close(w.stop) })
	<-w.done
}

// connections ends the watch: up is the fewer of the connections up at
// the end of the run and the fewest sampled during it; asked is
// --connections times the providers. A run that ended before settleAt
// waits until every connection is up or settleAt (first attempts still
// in progress), not for redials after a failed attempt.
func (w *connWatch) connections(ctx context.Context) (up, asked int) {
	w.close()
	for {
		up, asked = w.ref.Connections()
		if up >= asked || !time.Now().Before(w.settleAt) {
			break
		}
		select {
		case <-ctx.Done():
			return up, asked
		case <-time.After(20 * time.Millisecond):
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.sampled && w.fewest < up {
		up = w.fewest
	}
	return up, asked
}
