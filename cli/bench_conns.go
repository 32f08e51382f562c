package cli

import (
	"context"
	"sync"
	"time"

	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// connSampleEvery is how often a bench samples its reference's
// connections during the run (connWatch).
const connSampleEvery = 50 * time.Millisecond

// connWatch counts a bench reference's connections for the summary's
// connections_up and tells the connections a provider never let up from
// those of a provider that went away during the run (without it, a clean
// SIGTERM rolling restart read "only 2 of 3
// connection(s) up ... is the provider out of file descriptors").
//
// It samples every connSampleEvery, per provider address
// (kernel.Reference.ProviderConnections). A provider's first connection
// attempts have ended connect.timeout after it was first listed (a dial
// and its first ping are bounded by it); from then until all its
// connections were up at once, those not up count as never up, and the
// most at once is kept, per provider, for the providers listed at the
// end: what the run had throughout, not what came up
// later (three concurrent benches of 64 connections against a provider
// at accepts=183 each reported 64 of 64, because the one that finished
// first closed its connections while the others waited for theirs to
// settle, and their redials were accepted then). A provider that left
// the directory or announced its shutdown (read-only or draining event)
// is away; when it is listed again, or a new registry entry with its
// address is, its new connections get connect.timeout again. It
// restarted when the start its connections' hello gave
// (kernel.ProviderConnections.Started) changed: a provider whose
// registry entry left and came back with its session (a stopped
// process's session expired) is the same process, not a restart
// (tester100 #1); for a provider that gives no start, when it came back
// having had all its connections up. A provider that announced
// its shutdown and stays listed by a list that does not change (a direct
// URL: its connection closed, nothing unlisted it) is back only when a
// connection to it is up again or a new entry lists it: until then it is
// still away (counted as left at the end), not restarted (it was counted
// restarted as soon as its closed channel stopped saying it was leaving,
// though it never came back: tester46 finding 6). Connections that were up
// and are down at the end while their provider is listed (killed,
// stalled, cut off) are lost, not never up. A provider never up that
// left and did not come back (a killed provider's entry, listed until
// its registry session expired) is unreached: neither asked nor left.
type connWatch struct {
	ref    *kernel.Reference
	settle time.Duration // connect.timeout

	mu    sync.Mutex
	addrs map[string]*providerWatch

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// providerWatch is connWatch's state for one provider address.
type providerWatch struct {
	seen      map[spi.Invoker]bool // registry entries listed at the address
	since     time.Time            // listed (again) since
	full      bool                 // all its connections were up at once since then
	wasFull   bool                 // ... at any time in the run
	away      bool                 // last sample: unlisted, or announced its shutdown
	unlisted  bool                 // away since a sample that did not list it at all
	restarted bool
	started   int64  // the provider's start its connections' hello last gave (ms since the epoch), 0 none yet
	up, asked int    // last sample, entries not leaving
	neverUp   int    // most of its connections never up at once, past its connect.timeout
	everUp    bool   // a connection to it was up at some sample
	lastErr   string // why its last connection attempt failed, as last sampled ("" none)
}

// connCount is what a connWatch counted over a run.
type connCount struct {
	up, asked int // asked: of the providers listed at the end and not leaving
	lost      int // up during the run, down at its end, provider listed
	restarted int // provider addresses that went away and came back
	left      int // provider addresses that went away and did not come back, having been up
	// unreached counts the provider addresses never up during the run
	// that went away and did not come back (a killed provider's entry
	// until its registry session expired); unreachedErr is why one's
	// last attempt failed ("connection refused"), "" unknown.
	unreached    int
	unreachedErr string
}

// watchConnections starts sampling ref's connections; call it as soon as
// ref is made, and end with connections or close. listed is when ref was
// referred: the providers it lists now have been listed since then (bench
// waits for their first connection attempts before it starts, so a
// provider that never answers has had its connect.timeout by the end of
// a short run, which does not wait for it again).
func watchConnections(ref *kernel.Reference, listed time.Time) *connWatch {
	d, err := ref.URL().Duration("connect.timeout", kernel.DefaultConnectTimeout)
	if err != nil || d <= 0 {
		d = kernel.DefaultConnectTimeout
	}
	w := &connWatch{ref: ref, settle: d, addrs: map[string]*providerWatch{}, stop: make(chan struct{}), done: make(chan struct{})}
	first := time.Now()
	if listed.Before(first) {
		first = listed
	}
	w.sample(first)
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
		case now := <-t.C:
			w.sample(now)
		}
	}
}

// sample updates every address's state from the reference's listing at
// now, and reports whether a listed provider's first connection attempts
// may still be in progress (not all up, within connect.timeout of being
// listed).
func (w *connWatch) sample(now time.Time) (settling bool) {
	type addrNow struct {
		up, asked int
		present   bool
		entries   []spi.Invoker
		err       string
		started   int64 // the latest start its entries' connections gave, 0 none
	}
	cur := map[string]*addrNow{}
	for _, p := range w.ref.ProviderConnections() {
		a := cur[p.Addr]
		if a == nil {
			a = &addrNow{}
			cur[p.Addr] = a
		}
		a.started = max(a.started, p.Started)
		if p.Leaving {
			continue
		}
		a.present = true
		a.up += p.Up
		a.asked += p.Asked
		a.entries = append(a.entries, p.Provider)
		if p.Err != nil {
			a.err = p.Err.Error()
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for addr, st := range w.addrs {
		switch a := cur[addr]; {
		case a == nil:
			st.away, st.unlisted = true, true
		case !a.present:
			st.away = true
		}
	}
	for addr, a := range cur {
		if !a.present {
			continue
		}
		st := w.addrs[addr]
		if st == nil {
			st = &providerWatch{seen: map[spi.Invoker]bool{}, since: now}
			w.addrs[addr] = st
		} else {
			fresh := false
			for _, e := range a.entries {
				fresh = fresh || !st.seen[e]
			}
			if st.away && !st.unlisted && !fresh && a.up == 0 {
				// announced its shutdown, still listed as it was,
				// nothing up: not back
				continue
			}
			if st.away || (fresh && st.wasFull) {
				// back, or registered again: its new connections get
				// their connect.timeout; a restart only if its start
				// changes, or, for a provider that gives none, if it
				// had been up
				st.restarted = st.restarted || (st.wasFull && st.started == 0 && a.started == 0)
				st.since, st.full = now, false
			}
		}
		if a.started != 0 {
			st.restarted = st.restarted || (st.started != 0 && st.started != a.started)
			st.started = a.started
		}
		for _, e := range a.entries {
			st.seen[e] = true
		}
		st.away, st.unlisted, st.up, st.asked = false, false, a.up, a.asked
		st.everUp = st.everUp || a.up > 0
		if a.err != "" {
			st.lastErr = a.err
		}
		if a.up >= a.asked {
			st.full, st.wasFull = true, true
		}
		switch {
		case st.full:
		case now.Sub(st.since) < w.settle:
			settling = true
		default:
			st.neverUp = max(st.neverUp, a.asked-a.up)
		}
	}
	return settling
}

// close stops the sampling and waits for it; idempotent.
func (w *connWatch) close() {
	w.once.Do(func() { close(w.stop) })
	<-w.done
}

// connections ends the watch and returns its count. A run that ended
// while a listed provider's first connection attempts may still be in
// progress (not all up, within connect.timeout of being listed) waits
// for them, not for redials after a failed attempt. up is asked less the
// most connections never up at once during the run and the connections
// lost at its end.
func (w *connWatch) connections(ctx context.Context) connCount {
	w.close()
	for w.sample(time.Now()) {
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
			continue
		}
		break
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var c connCount
	never := 0
	for _, st := range w.addrs {
		if st.restarted {
			c.restarted++
		}
		if st.away && !st.everUp {
			// never reachable and gone: not a provider of the end's
			// list, so not counted against its connections (tester67
			// #3: a killed provider's entry, listed until its
			// ZooKeeper session expired, read "only 1 of 2 up")
			c.unreached++
			if c.unreachedErr == "" {
				c.unreachedErr = st.lastErr
			}
			continue
		}
		if st.away {
			c.left++
			continue
		}
		c.asked += st.asked
		never += min(st.neverUp, st.asked)
		if st.full && st.up < st.asked {
			c.lost += st.asked - st.up
		}
	}
	c.up = max(0, c.asked-min(never, c.asked)-c.lost)
	return c
}
