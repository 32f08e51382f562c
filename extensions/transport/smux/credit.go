package smux

import (
	"io"
	"sync"
	"sync/atomic"

	"github.com/airnode/airnode/spi"
)

// Credit for the streams this side opens. smux bounds what a session
// buffers for its streams (smux.buffer, MaxReceiveBuffer) and each
// stream's share of it (a quarter: MaxStreamBuffer, the window its peer
// may fill before a window update), but the sum of the windows of many
// streams is larger than the session's buffer, and once that buffer is
// full the peer's smux reads nothing more from the connection — not the
// window updates either, which travel the same way as the data. A
// provider whose answers to a consumer wait unsent stops reading new
// requests (the exchange's backpressure), the large ones on streams of
// their own included; a consumer that then sent more large requests
// (1 MiB each, 64 callers) filled the provider's buffer, the provider's
// smux stopped reading, and the consumer's window updates for the large
// answers it was reading never reached the provider: neither side moved
// again (tester57: `bench -c 64 --req 1MiB --mix-resp 2MiB --mix-c 16`,
// 0 calls in 30 s; tcp, with no shared buffer, was fine).
//
// So the data this side writes on a stream it opened counts against a
// credit until the peer begins to read that stream: its first window
// update (smux sends one on a stream's first read, window.go) or its FIN
// (the peer closed the stream, read or not) gives the stream's bytes
// back. A stream writes at most one window before then, and waits for the
// rest (smux's own window bounds what follows, and the stream is being
// read). The credit is half the peer's session buffer (twice the peer's stream
// window, which is a quarter of its buffer; 512 KiB until the peer's
// first update), so the streams the peer has not begun to read and the
// primary stream's window (another quarter) together leave a quarter of
// its buffer free: its smux always reads on, and the updates get through.
// A write that finds the credit spent waits (in Write, as for smux's
// window) until it is given back, the stream is closed or the session
// ends; one stream alone always gets its window. This is HTTP/2's
// connection-level flow control, counted from the sender's side.

// cmdFIN is smux's stream close (github.com/xtaci/smux frame.go).
const cmdFIN = 1

// streamCredit is a session's credit for the streams this side opens.
// Session.Open registers each such stream (opened), in the order smux
// numbered them (openMu), so that a FIN the peer sent before that — a
// stream it refused at once, before this side wrote on it — is known:
// its id is above every registered one (early).
type streamCredit struct {
	mu      sync.Mutex
	used    int64                      // bytes counted, over every stream in streams
	streams map[uint32]*creditedStream // the open streams this side opened, and closed ones the peer has not yet begun to read
	waiters []*creditWaiter            // writes waiting for credit, served in order (grantLocked)
	early   uint32                     // a stream the peer began to read or closed before it was registered

	openMu sync.Mutex    // Open holds it across smux's OpenStream and opened
	high   atomic.Uint32 // the highest id registered
	n      atomic.Int32  // len(streams): the receiver's check, without the lock
	odd    bool          // this side's ids are odd (the consumer's, as smux numbers them)
}

// creditedStream is a stream's state in its session's credit. On mu.
type creditedStream struct {
	counted int64         // bytes counted
	started bool          // the peer began to read it, or closed it: it counts nothing more
	closed  bool          // this side closed it
	startCh chan struct{} // closed when started is set
}

// creditWaiter is a write waiting for credit. On mu.
type creditWaiter struct {
	cs      *creditedStream
	k       int64         // bytes it asks for
	window  int64         // the peer's stream window it asked under
	counted bool          // granted and counted (not: granted because its stream started)
	granted chan struct{} // closed when granted
}

// opened registers stream sid, just opened by this side.
func (c *streamCredit) opened(sid uint32) *creditedStream {
	cs := &creditedStream{startCh: make(chan struct{})}
	c.mu.Lock()
	if c.streams == nil {
		c.streams = make(map[uint32]*creditedStream)
	}
	c.streams[sid] = cs
	c.n.Store(int32(len(c.streams)))
	c.high.Store(sid)
	if c.early == sid {
		cs.started = true
		close(cs.startCh)
		c.early = 0
	}
	c.mu.Unlock()
	return cs
}

// take returns how many of the next n bytes of a write on cs may be
// written now: all of them once the peer began to read the stream; else
// as many as keep the stream's count within window (the peer's stream
// window), counted, waiting while the stream has counted a whole window
// (for the peer to begin reading it) or while over twice window would be
// counted (unless nothing is). Writes waiting for credit are served in
// the order they came (grantLocked): woken together, some lost the race
// for it again and again (tester58: at -c 200 with 1 MiB requests a few
// timed out while being written, p99 3.0 s against tcp's 0.65 s). It
// fails with io.ErrClosedPipe once die, done or gone is closed.
func (c *streamCredit) take(cs *creditedStream, n, window int64, die, done, gone <-chan struct{}) (int64, error) {
	for {
		c.mu.Lock()
		if cs.started {
			c.mu.Unlock()
			return n, nil
		}
		k := min(n, window-cs.counted)
		if k <= 0 {
			c.mu.Unlock()
			select {
			case <-cs.startCh:
				continue
			case <-die:
				return 0, io.ErrClosedPipe
			case <-done:
				return 0, io.ErrClosedPipe
			case <-gone:
				return 0, io.ErrClosedPipe
			}
		}
		if len(c.waiters) == 0 && c.fits(k, window) {
			c.countLocked(cs, k)
			c.mu.Unlock()
			return k, nil
		}
		w := &creditWaiter{cs: cs, k: k, window: window, granted: make(chan struct{})}
		c.waiters = append(c.waiters, w)
		c.mu.Unlock()
		select {
		case <-w.granted:
			return k, nil
		case <-die:
		case <-done:
		case <-gone:
		}
		c.mu.Lock()
		select {
		case <-w.granted: // granted meanwhile: give it back, unless its stream started since (start gave it back)
			if w.counted && !cs.started {
				cs.counted -= k
				c.used -= k
			}
		default:
			for i, o := range c.waiters {
				if o == w {
					c.waiters = append(c.waiters[:i], c.waiters[i+1:]...)
					break
				}
			}
		}
		c.grantLocked()
		c.mu.Unlock()
		return 0, io.ErrClosedPipe
	}
}

// giveBack returns k bytes take counted for cs that were not written
// after all (the stream was withdrawn meanwhile); nothing when the peer
// began to read the stream since, which gave back all it counted.
func (c *streamCredit) giveBack(cs *creditedStream, k int64) {
	c.mu.Lock()
	if !cs.started {
		cs.counted -= k
		c.used -= k
		c.grantLocked()
	}
	c.mu.Unlock()
}

// fits reports whether k more bytes may be counted under window. On mu.
func (c *streamCredit) fits(k, window int64) bool { return c.used == 0 || c.used+k <= 2*window }

// countLocked counts k bytes of cs. On mu.
func (c *streamCredit) countLocked(cs *creditedStream, k int64) {
	cs.counted += k
	c.used += k
}

// grantLocked serves the waiting writes in order while the first fits
// (or its stream started meanwhile: it needs no credit). On mu.
func (c *streamCredit) grantLocked() {
	for len(c.waiters) > 0 {
		w := c.waiters[0]
		switch {
		case w.cs.started:
		case c.fits(w.k, w.window):
			c.countLocked(w.cs, w.k)
			w.counted = true
		default:
			return
		}
		c.waiters[0] = nil
		c.waiters = c.waiters[1:]
		close(w.granted)
	}
	c.waiters = nil
}

// mine reports whether the receiver should look at a window update or
// FIN of stream sid (not the primary stream's): a stream this side
// opened, while any is registered, or one not yet registered.
func (c *streamCredit) mine(sid uint32) bool {
	return sid&1 == 1 == c.odd && (c.n.Load() != 0 || sid > c.high.Load())
}

// start gives back what stream sid counts: the peer began to read it
// or closed it. It runs on smux's receiver (updWatch.feed).
//
//go:noinline
func (c *streamCredit) start(sid uint32) {
	c.mu.Lock()
	cs := c.streams[sid]
	switch {
	case cs == nil:
		if sid > c.high.Load() {
			c.early = sid
		}
	case !cs.started:
		cs.started = true
		close(cs.startCh)
		c.used -= cs.counted
		cs.counted = 0
		c.grantLocked() // also a write of this stream still waiting in line (the peer closed it first)
		if cs.closed {
			delete(c.streams, sid)
			c.n.Store(int32(len(c.streams)))
		}
	}
	c.mu.Unlock()
}

// close notes that this side closed stream sid: it is forgotten at once
// if the peer began to read it, else when it does (start).
func (c *streamCredit) close(sid uint32, cs *creditedStream) {
	c.mu.Lock()
	cs.closed = true
	if cs.started {
		delete(c.streams, sid)
		c.n.Store(int32(len(c.streams)))
	}
	c.mu.Unlock()
}

// openedStream is a stream this side opened, other than the primary: its
// writes count against the session's credit (see above), and until its
// first byte is handed to smux it can be withdrawn (spi.Withdrawer).
type openedStream struct {
	*stream
	cs *creditedStream
	wd *withdrawal
}

// withdrawal is an opened stream's spi.Withdrawer state.
type withdrawal struct {
	state atomic.Int32  // nothingHanded, handed or withdrawn
	gone  chan struct{} // closed by a successful Withdraw: a Write waiting for credit returns
}

// withdrawal states.
const (
	nothingHanded int32 = iota // no byte of the stream handed to smux yet
	handed                     // some were: they may reach the peer
	withdrawn                  // Withdraw won: none ever will
)

// hand reports whether a Write may hand bytes to smux: not once the
// stream was withdrawn; the first to do so makes Withdraw fail.
func (w *withdrawal) hand() bool {
	for {
		switch w.state.Load() {
		case handed:
			return true
		case withdrawn:
			return false
		}
		if w.state.CompareAndSwap(nothingHanded, handed) {
			return true
		}
	}
}

// Write writes b through smux, no more of it before the peer begins to
// read the stream than one peer window, and that only as the session's
// credit allows (see above), waiting for both. It fails with
// io.ErrClosedPipe once the stream or session closes while it waits, and
// with spi.ErrWithdrawn once the stream was withdrawn (Withdraw).
//
// smux itself lets a new stream send 256 KiB before the peer's first
// window update, whatever the peer's window: against a peer whose
// smux.buffer is 256 KiB one such stream filled its whole buffer
// (tester58: provider smux.buffer=256KiB, `bench -c 16 --req 1MiB`, 0
// calls). So the rest of b waits here for the peer's first update.
func (o openedStream) Write(b []byte) (int, error) {
	o.s.conn.busyBegin()
	defer o.s.conn.busyEnd()
	window := int64(o.s.conn.win.window.Load())
	n := 0
	for len(b) > 0 {
		k, err := o.s.conn.credit.take(o.cs, int64(len(b)), window, o.GetDieCh(), o.s.done, o.wd.gone)
		if err != nil {
			if o.wd.state.Load() == withdrawn {
				return n, spi.ErrWithdrawn
			}
			return n, err
		}
		if !o.wd.hand() {
			o.s.conn.credit.giveBack(o.cs, k)
			return n, spi.ErrWithdrawn
		}
		m, err := o.Stream.Write(b[:k])
		n += m
		if err != nil {
			return n, err
		}
		b = b[k:]
	}
	return n, nil
}

// Withdraw implements spi.Withdrawer: it succeeds while no byte written
// on the stream has been handed to smux — its writes still wait for the
// session's credit, as every large request beyond the first two does on
// a session whose peer reads nothing (its stream's SYN went out at Open:
// the peer sees the stream end empty once the writer closes it). A byte
// handed to smux is queued for the socket and cannot be recalled.
func (o openedStream) Withdraw() bool {
	if o.wd.state.CompareAndSwap(nothingHanded, withdrawn) {
		close(o.wd.gone)
		return true
	}
	return o.wd.state.Load() == withdrawn
}

// Close closes the stream (smux's Close) and tells the credit.
func (o openedStream) Close() error {
	err := o.Stream.Close()
	o.s.conn.credit.close(o.ID(), o.cs)
	return err
}
