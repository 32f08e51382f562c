package smux

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	xsmux "github.com/xtaci/smux"
)

// The primary stream reads the socket itself. smux's receiver goroutine
// reads every frame of a session and wakes the reader of the frame's
// stream, so every batch of requests a provider read cost a goroutine
// hand-off, most often the futex wake-up of an idle thread, and a stream
// Read returned one frame (a consumer's write) at a time, so a provider
// wrote its answers in smaller batches than on tcp: at c=100 0.10 writev
// a call against tcp's 0.04 write, at c=1 1.6 futex calls a call against
// none (bench/README, twenty-second pass).
//
// On a plain socket the connection's bytes are now split as they are
// read (demux): the primary stream's data frames go to the primary
// stream's reader, every other byte (frames of other streams, window
// updates, SYN, FIN, NOP, and the primary stream's own FIN and updates)
// to smux's receiver, which reads them through watchedConn.Read as before.
// Whoever reads the socket holds the demux's token and parses what it
// read (updWatch.step): the primary stream's reader, whenever it waits
// for data, so a batch of requests reaches the exchange with no hand-off
// and as many frames as fit in its buffer; smux's receiver before the
// primary stream's first read, and when the primary stream's reader has
// stayed away a while (takeoverAfter; a provider whose reader stopped
// while its answers wait unsent must still read the window updates that
// let them go). Bytes parsed for the one not reading wait in its queue
// (pq, sq) and wake it.
//
// smux never sees the primary stream's data, so it sends no window
// updates for it: the primary stream's reader does, as smux would (on
// its first read, then each time half its window more was read), and the
// primary stream's data no longer counts against smux's session buffer;
// the peer's window bounds it, and pqLimit in case a peer ignores the
// window. What smux's receiver has not taken counts up to sqLimit; over
// it the primary stream's reader stops reading the socket, as smux's
// receiver stops when its buffer is full.

// takeoverAfter is how long the primary stream's reader may stay away
// (not in Read) before smux's receiver reads the socket for it, between
// once and twice that, while something waits for what the socket brings:
// a write on another stream this side opened (for the peer's window
// updates or its first read), a read of another stream, the primary
// stream's write waiting for its window (busyBegin). Otherwise it is
// takeoverIdle: the timer that watches the reader's absence fires once
// per period while the reader comes and goes, and at c=1 a 2 ms timer's
// wake-ups were most of the provider's futex calls (0.17-0.20 a call
// against 0.03 with a 50 ms one, alternated pairs).
const (
	takeoverAfter = 2 * time.Millisecond
	takeoverIdle  = 20 * time.Millisecond
)

// sqLimit bounds the bytes parsed for smux's receiver that it has not
// taken yet, and the session's pqLimit (its smux.buffer, four windows)
// those parsed for the primary stream's reader; the one reading the
// socket stops reading it beyond them, as smux's receiver stops once its
// buffer is full. A peer that keeps the primary stream's window (every
// smux, and airnode's own writes since fc9ae12) never brings pq over one
// window.
const sqLimit = 256 << 10

// lendMin is the data of another stream's frame that the primary stream's
// reader, meeting it, leaves to smux's receiver to read from the socket
// itself (lend) rather than queueing it through sq: copied through sq,
// 16 KiB a fill, every fill of a large body woke the receiver once, and
// calls with 100 KiB bodies (streams of their own) took 0.5 ms longer on
// each side (tester59: `bench -c 1 --req 100KiB --resp 100KiB` 532-555
// -> 354 calls/s).
const lendMin = 4 << 10

// queueKeep is the largest buffer a queue keeps once empty.
const queueKeep = 16 << 10

// The demux's token holders.
const (
	byNone int8 = iota
	byPrimary
	byReceiver
)

// cmdSYN is smux's stream open (github.com/xtaci/smux frame.go).
const cmdSYN = 0

// demux is a plain socket's split between the primary stream's reader and
// smux's receiver (see above). Its fields are on mu; the read-ahead buffer
// and the frame parser (watchedConn.ra, watch) are the token holder's.
type demux struct {
	mu       sync.Mutex
	holder   int8 // who reads the socket: byNone, byPrimary, byReceiver
	active   bool // the primary stream's reader has read
	takeover bool // it stayed away takeoverAfter: the receiver may read the socket
	pWaiting bool // the primary stream's reader waits in Read
	rWaiting bool // smux's receiver waits in Read
	pClosed  bool // this side closed the primary stream: its data is dropped
	client   bool // the consumer's side: the primary stream is the first it opens
	bad      bool // a frame header smux would refuse: every byte is smux's from here
	lend     bool // smux's receiver reads the socket for the rest of another stream's data frame

	pq   queue // the primary stream's data, parsed by the receiver
	pEnd error // after pq: io.EOF (the peer's FIN), or the socket's error
	sq   queue // smux's bytes, parsed by the primary stream's reader
	sEnd error // after sq: the socket's error

	armed      bool   // timer runs
	short      bool   // for takeoverAfter (else takeoverIdle)
	reads      uint64 // the primary stream's reads so far
	readsAtArm uint64
	timer      *time.Timer
	busy       atomic.Int32 // reads and writes waiting for the socket (busyBegin)

	pWake chan struct{} // 1-buffered: the primary stream's reader may go on
	rWake chan struct{} // 1-buffered: smux's receiver may go on

	// The primary stream's window updates (its reader's, one at a time).
	window   uint32 // this side's stream window: smux's MaxStreamBuffer
	pqLimit  int    // 4 windows: smux.buffer
	numRead  uint32 // primary stream bytes read, modulo 2^32
	incr     uint32 // since the last update
	updated  bool   // an update was sent
	updValue atomic.Uint32
	updBusy  atomic.Bool
}

func newDemux(client bool, window int) *demux {
	return &demux{client: client, window: uint32(window), pqLimit: 4 * window, pWake: make(chan struct{}, 1), rWake: make(chan struct{}, 1)}
}

func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// header is updWatch's look at a complete frame header: it reports
// whether the frame's data is the primary stream's (a data frame of the
// primary stream). On a provider the first SYN names the primary stream;
// a FIN of it ends the primary stream's reads once pq is read. A header
// smux refuses (another version, an unknown command) sends everything
// from here to smux, which ends the session with a protocol error. On mu.
func (d *demux) header(version, cmd byte, sid uint32, win *sendWindow) bool {
	if d.bad {
		return false
	}
	if version != smuxVersion || cmd > cmdUPD {
		d.bad = true
		if d.pEnd == nil {
			d.pEnd = xsmux.ErrInvalidProtocol
		}
		return false
	}
	primary := win.sid.Load()
	if primary == 0 && cmd == cmdSYN && !d.client {
		win.sid.Store(sid)
		return false
	}
	if sid != primary || primary == 0 {
		return false
	}
	if cmd == cmdFIN && d.pEnd == nil {
		d.pEnd = io.EOF
	}
	return cmd == cmdPSH
}

// queue is a byte queue. It grows only in grow, called where the stack is
// shallow (see route), and keeps at most queueKeep of buffer once empty.
type queue struct {
	b []byte
	r int
}

func (q *queue) len() int { return len(q.b) - q.r }

// free is how many bytes push takes without growing.
func (q *queue) free() int { return cap(q.b) - len(q.b) }

func (q *queue) push(p []byte) { q.b = append(q.b, p...) }

func (q *queue) pop(p []byte) int {
	n := copy(p, q.b[q.r:])
	q.r += n
	if q.r == len(q.b) {
		if cap(q.b) > queueKeep {
			q.b = nil
		} else {
			q.b = q.b[:0]
		}
		q.r = 0
	}
	return n
}

// grow makes room for n more bytes.
//
//go:noinline
func (q *queue) grow(n int) {
	b := make([]byte, q.len(), max(2*cap(q.b), q.len()+n))
	copy(b, q.b[q.r:])
	q.b, q.r = b, 0
}

// route parses the read-ahead buffer's unread bytes: the primary stream's
// data into pb and then pq (dropped once this side closed the stream),
// smux's bytes into sb and then sq. With sb, it stops once sb is full (the
// receiver reads on). It returns the bytes put into pb and into sb, and
// the queue that must grow (by the read-ahead buffer's unread bytes) for
// it to go on, if any: it grows no queue itself, since smux's receiver
// calls it deep in its stack, and an allocation there took its stack past
// the 2 KiB a goroutine starts with (BenchmarkIdleSession: 6.3 -> 8.3
// KiB of stack a session). On mu, by the token holder.
func (c *watchedConn) route(pb, sb []byte) (np, ns int, grow *queue) {
	d, ra, u := c.dm, &c.ra, &c.watch
	for ra.r < ra.w && (sb == nil || ns < len(sb)) {
		if sb == nil && u.psh && u.left >= lendMin {
			d.lend = true // the receiver reads the rest of this frame itself
			if d.rWaiting {
				wake(d.rWake)
			}
			break
		}
		p := ra.buf[ra.r:ra.w]
		// the most the next step puts out, and where
		switch {
		case u.left > 0 && u.mine:
			if len(pb)-np+d.pq.free() < min(len(p), u.left) && !d.pClosed {
				return np, ns, &d.pq
			}
		case u.left > 0:
			if len(sb)-ns+d.sq.free() < min(len(p), u.left) {
				return np, ns, &d.sq
			}
		default: // a header: to smux, or nowhere
			if len(sb)-ns+d.sq.free() < frameHeaderLen {
				return np, ns, &d.sq
			}
		}
		k, s, p := u.step(p)
		ra.r += k
		if len(p) > 0 {
			m := copy(pb[np:], p)
			np += m
			if m < len(p) && !d.pClosed {
				d.pq.push(p[m:])
			}
		}
		if len(s) > 0 {
			m := copy(sb[ns:], s)
			ns += m
			if m < len(s) {
				d.sq.push(s[m:])
			}
		}
	}
	if ra.r == ra.w {
		ra.release()
	}
	return np, ns, nil
}

// filled takes the result of a read into the read-ahead buffer (err of
// RawConn.Read, then the attempt's own): true when it holds data. A read
// deadline (set to stop the primary stream's reader when this side closes
// that stream) is cleared; any other error is the socket's end (ended).
// It runs after the read, off the deep call chain of the wait, so that
// smux's receiver stays within its first 2 KiB of stack (see
// watchedConn.WriteBuffers). On mu, by the token holder.
//
//go:noinline
func (c *watchedConn) filled(err error) bool {
	ra := &c.ra
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		_ = c.Conn.SetReadDeadline(time.Time{})
		return false
	case err != nil:
	case ra.err != nil:
		err = &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("read", ra.err)}
	case ra.n == 0:
		err = io.EOF
	default:
		ra.r, ra.w = 0, ra.n
		return true
	}
	ra.release()
	c.fail(err)
	c.ended(err)
	return false
}

// ended records the socket's end for both readers and wakes them. On mu.
func (c *watchedConn) ended(err error) {
	d := c.dm
	if d.sEnd == nil {
		d.sEnd = err
	}
	if d.pEnd == nil {
		d.pEnd = err
	}
	wake(d.pWake)
	wake(d.rWake)
}

// routeWake routes the read-ahead buffer (route), growing the queues it
// asks for, and wakes the one not reading if it has bytes now. On mu, by
// the token holder.
func (c *watchedConn) routeWake(pb, sb []byte) (np, ns int) {
	d := c.dm
	for {
		n1, n2, q := c.route(pb[np:], sb[ns:])
		np, ns = np+n1, ns+n2
		if q == nil {
			break
		}
		q.grow(c.ra.w - c.ra.r)
	}
	if d.sq.len() > 0 && d.rWaiting {
		wake(d.rWake)
	}
	if d.pq.len() > 0 && d.pWaiting {
		wake(d.pWake)
	}
	return np, ns
}

// readPrimary is the primary stream's Read on a plain socket: what pq
// holds, else what it reads from the socket itself, else,
// while the receiver holds the socket, what the receiver parses for it.
// After the data come the stream's end (io.EOF after the peer's FIN), the
// socket's error, or io.ErrClosedPipe once this side closed the stream.
func (c *watchedConn) readPrimary(b []byte, die <-chan struct{}) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	d := c.dm
	d.mu.Lock()
	d.active = true
	dead := false // the stream or the session is closed (smux's die)
	for {
		if d.pClosed || dead && d.pq.len() == 0 && d.pEnd == nil {
			c.giveUp()
			d.mu.Unlock()
			return 0, io.ErrClosedPipe
		}
		if d.pq.len() > 0 {
			full := d.pq.len() >= d.pqLimit
			n := d.pq.pop(b)
			if full && d.rWaiting && d.pq.len() < d.pqLimit {
				wake(d.rWake) // it may read the socket again
			}
			c.leftRead()
			d.mu.Unlock()
			c.readPrimaryDone(n)
			return n, nil
		}
		if d.pEnd != nil {
			err := d.pEnd
			c.giveUp()
			d.mu.Unlock()
			return 0, err
		}
		if d.holder == byNone && !d.lend && d.sq.len() < sqLimit {
			d.holder, d.takeover = byPrimary, false
			n, filled := 0, true
			if c.ra.r == c.ra.w {
				d.mu.Unlock()
				err := c.ra.raw.Read(c.ra.attempt)
				d.mu.Lock()
				filled = c.filled(err)
			}
			if filled {
				n, _ = c.routeWake(b, nil)
			}
			d.holder = byNone
			if n > 0 {
				c.leftRead()
				d.mu.Unlock()
				c.readPrimaryDone(n)
				return n, nil
			}
			continue
		}
		d.pWaiting = true
		d.mu.Unlock()
		select {
		case <-d.pWake:
		case <-die:
			dead = true
		}
		d.mu.Lock()
		d.pWaiting = false
	}
}

// giveUp hands the socket to smux's receiver for good: the primary
// stream has ended or was closed, and its reader reads no more. On mu.
func (c *watchedConn) giveUp() {
	c.dm.takeover = true
	if c.dm.rWaiting {
		wake(c.dm.rWake)
	}
}

// leftRead notes that the primary stream's reader leaves Read, and arms
// the takeover timer unless it runs. On mu.
func (c *watchedConn) leftRead() {
	d := c.dm
	d.reads++
	if d.armed {
		return
	}
	d.readsAtArm = d.reads
	c.arm(d.busy.Load() > 0)
}

// arm starts the takeover timer: for takeoverAfter if short, else
// takeoverIdle. On mu.
func (c *watchedConn) arm(short bool) {
	d := c.dm
	after := takeoverIdle
	if short {
		after = takeoverAfter
	}
	d.armed, d.short = true, short
	if d.timer == nil {
		d.timer = time.AfterFunc(after, c.tick)
	} else {
		d.timer.Reset(after)
	}
}

// busyBegin notes a read or write that waits for what the socket brings
// (see takeoverAfter); busyEnd, that it is over. If the primary stream's
// reader is away, the takeover timer is made short.
func (c *watchedConn) busyBegin() {
	d := c.dm
	if d == nil {
		return
	}
	d.busy.Add(1)
	d.mu.Lock()
	if d.active && !d.takeover && !d.pWaiting && d.holder != byPrimary && (!d.armed || !d.short) {
		d.readsAtArm = d.reads
		c.arm(true)
	}
	d.mu.Unlock()
}

func (c *watchedConn) busyEnd() {
	if c.dm != nil {
		c.dm.busy.Add(-1)
	}
}

// tick is the takeover timer: if the primary stream's reader has not
// been back in Read since the timer was armed, smux's receiver may read
// the socket until it is.
func (c *watchedConn) tick() {
	d := c.dm
	d.mu.Lock()
	defer d.mu.Unlock()
	d.armed = false
	switch {
	case d.pWaiting || d.holder == byPrimary:
		// back: it arms the timer again when it leaves
	case d.reads != d.readsAtArm:
		d.readsAtArm = d.reads
		c.arm(d.busy.Load() > 0)
	default:
		d.takeover = true
		if d.rWaiting {
			wake(d.rWake)
		}
	}
}

// readReceiver is watchedConn.Read for smux's receiver on a plain socket:
// what sq holds, else what it reads from the socket itself when it may
// (before the primary stream's first read, or on takeover), else it waits
// for the primary stream's reader to parse some for it. After the data
// comes the socket's error.
func (c *watchedConn) readReceiver(b []byte) (int, error) {
	d := c.dm
	d.mu.Lock()
	for {
		if d.sq.len() > 0 {
			full := d.sq.len() >= sqLimit
			n := d.sq.pop(b)
			if full && d.pWaiting && d.sq.len() < sqLimit {
				wake(d.pWake) // it may read the socket again
			}
			d.mu.Unlock()
			return n, nil
		}
		if d.sEnd != nil {
			err := d.sEnd
			d.mu.Unlock()
			return 0, err
		}
		if d.holder == byNone && (!d.active || d.takeover || d.lend) && d.pq.len() < d.pqLimit {
			d.holder = byReceiver
			n, filled := 0, true
			if c.ra.r == c.ra.w {
				u := &c.watch
				direct := u.psh && u.left > 0
				if direct { // straight into b: the rest of another stream's frame
					c.ra.dst = b[:min(len(b), u.left)]
				}
				d.mu.Unlock()
				err := c.ra.raw.Read(c.ra.attempt) // keep this wait shallow (filled)
				d.mu.Lock()
				c.ra.dst = nil
				if filled = c.filled(err); filled && direct {
					n, filled = c.ra.w, false
					c.ra.r, c.ra.w = 0, 0
					u.left -= n
				}
			}
			if filled {
				_, n = c.routeWake(nil, b)
			}
			d.holder = byNone
			if d.lend && !(c.watch.psh && c.watch.left > 0) && c.ra.r == c.ra.w {
				d.lend = false // the frame is read and nothing more is: the token goes back
			}
			if d.pWaiting && !d.lend {
				d.takeover = false // the primary stream's reader is back: it reads from here
				wake(d.pWake)
			}
			if n > 0 {
				d.mu.Unlock()
				return n, nil
			}
			continue
		}
		d.rWaiting = true
		d.mu.Unlock()
		<-d.rWake
		d.mu.Lock()
		d.rWaiting = false
	}
}

// readPrimaryDone counts n bytes the primary stream's reader took and sends
// the peer a window update as smux does for its streams: after the first
// read, then each time half the window more was read.
func (c *watchedConn) readPrimaryDone(n int) {
	d := c.dm
	d.numRead += uint32(n)
	d.incr += uint32(n)
	if d.updated && d.incr < d.window/2 {
		return
	}
	d.updated, d.incr = true, 0
	d.updValue.Store(d.numRead)
	if d.updBusy.CompareAndSwap(false, true) {
		go c.sendUpdates()
	}
}

// sendUpdates writes the primary stream's latest window update until no
// newer one is waiting; one runs at a time (updBusy), so updates go out in
// order and a stale one never follows a newer one.
func (c *watchedConn) sendUpdates() {
	d := c.dm
	for {
		v := d.updValue.Load()
		if c.writeUpdate(c.win.sid.Load(), v, d.window) != nil {
			d.updBusy.Store(false)
			return
		}
		d.updBusy.Store(false)
		if d.updValue.Load() == v || !d.updBusy.CompareAndSwap(false, true) {
			return
		}
	}
}

// writeUpdate writes a window update frame of stream sid: consumed bytes
// read, window the stream's window, after what is owed.
func (c *watchedConn) writeUpdate(sid, consumed, window uint32) error {
	var f [frameHeaderLen + updLen]byte
	f[0], f[1] = smuxVersion, cmdUPD
	binary.LittleEndian.PutUint16(f[2:], updLen)
	binary.LittleEndian.PutUint32(f[4:], sid)
	binary.LittleEndian.PutUint32(f[8:], consumed)
	binary.LittleEndian.PutUint32(f[12:], window)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if len(c.owed) > 0 {
		if err := c.payOwed(); err != nil {
			return err
		}
	}
	_, err := c.writev([][]byte{f[:]}, true)
	return err
}

// closePrimary notes that this side closed the primary stream: its reader
// stops (a read deadline wakes it if it waits on the socket), and its
// data is dropped from here, as smux drops a closed stream's.
func (c *watchedConn) closePrimary() {
	d := c.dm
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pClosed = true
	d.pq = queue{}
	wake(d.pWake)
	c.giveUp()
	if d.holder == byPrimary {
		_ = c.Conn.SetReadDeadline(time.Now())
	}
}

// closed wakes both readers once the connection is closed.
func (c *watchedConn) closed() {
	d := c.dm
	d.mu.Lock()
	defer d.mu.Unlock()
	c.ended(io.ErrClosedPipe) // as smux's streams say once closed
	if d.timer != nil {
		d.timer.Stop()
	}
}
