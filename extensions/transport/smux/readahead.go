package smux

import (
	"net"
	"os"
	"sync"
	"syscall"

	"github.com/airnode/airnode/internal/rawsock"
)

// readAheadSize is the read-ahead buffer of a session's connection on a
// plain socket: smux reads every frame header (8 bytes) and then its data
// with one read each; the demux reads a batch of small frames in one
// system call and splits them (demux.go).
const readAheadSize = 16 << 10

// readAheadPool holds the read-ahead buffers. A session holds one only
// while it has unread bytes in it: waiting for data, it holds none.
var readAheadPool = sync.Pool{New: func() any { return new([readAheadSize]byte) }}

// readAhead is a connection's read-ahead state, the demux's token holder's.
type readAhead struct {
	raw     syscall.RawConn       // the socket; nil under TLS: no read-ahead
	buf     *[readAheadSize]byte  // from readAheadPool while r < w
	r, w    int                   // unread bytes are buf[r:w]
	dst     []byte                // set: fill reads here, not into buf (demux's direct reads)
	n       int                   // last attempt: bytes read
	err     error                 // last attempt: system call error
	attempt func(fd uintptr) bool // read, bound once for RawConn.Read

	first *openingBytes // a provider's: the connection's first bytes, kept by fillFirst
}

// openingLen is how many of a provider's connection's first bytes its
// session keeps for a ProtocolError (spi.OpeningRecognizer's 16).
const openingLen = 16

// openingBytes are a connection's first bytes, written by its reader
// while n < openingLen and read after smux reported a protocol error.
type openingBytes struct {
	b [openingLen]byte
	n int
}

// keep appends p's first bytes until openingLen are kept; it reports
// whether that many are.
func (o *openingBytes) keep(p []byte) bool {
	o.n += copy(o.b[o.n:], p)
	return o.n == openingLen
}

// fillFirst is fill for a provider's connection until its first
// openingLen bytes are read: it keeps them in first and then binds
// attempt to fill, so that later reads take the same path as any
// session's. Only the first reads pass here.
func (ra *readAhead) fillFirst(fd uintptr) bool {
	done := ra.fill(fd)
	if done && ra.n > 0 {
		dst := ra.dst
		if dst == nil {
			dst = ra.buf[:]
		}
		if ra.first.keep(dst[:ra.n]) {
			ra.attempt = ra.fill
		}
	}
	return done
}

// fill is one non-blocking read attempt on fd under the connection's read
// lock: true when done (data, end of stream or error), false to wait until
// fd is readable, with the buffer given back to the pool.
func (ra *readAhead) fill(fd uintptr) bool {
	dst := ra.dst
	if dst == nil {
		if ra.buf == nil {
			ra.buf = readAheadPool.Get().(*[readAheadSize]byte)
		}
		dst = ra.buf[:]
	}
	for {
		ra.n, ra.err = rawsock.Read(fd, dst)
		if ra.err != syscall.EINTR {
			break
		}
	}
	if ra.err == syscall.EAGAIN || ra.err == syscall.EWOULDBLOCK {
		ra.release()
		ra.err = nil
		return false
	}
	if ra.n < 0 {
		ra.n = 0
	}
	return true
}

// release gives the buffer back to the pool.
func (ra *readAhead) release() {
	if ra.buf != nil {
		readAheadPool.Put(ra.buf)
		ra.buf = nil
	}
	ra.r, ra.w = 0, 0
}

// rawWritev is the state of one write of a vector on a plain socket:
// writev(2) as a raw system call (rawsock.Writev: no wake-up of the
// runtime's sysmon thread per write at one caller), looping over partial
// writes and waiting on the poller while the send buffer is full, as
// net.Buffers.WriteTo does. One writer at a time: the connection's wmu.
type rawWritev struct {
	raw     syscall.RawConn       // the socket; nil under TLS
	v       [][]byte              // what is left to write; consumed
	n       int                   // bytes written
	err     error                 // the system call's error
	wait    bool                  // wait for room until v is written
	attempt func(fd uintptr) bool // write, bound once for RawConn.Write
}

// writeBuffers writes v (all of it when wait is true, else what the
// socket takes at once); an error kills the session (c.fail).
func (w *rawWritev) writeBuffers(c *watchedConn, v [][]byte, wait bool) (int, error) {
	w.v, w.wait = v, wait
	err := w.raw.Write(w.attempt)
	n, werr := w.n, w.err
	w.v, w.n, w.err = nil, 0, nil
	if err == nil && werr != nil {
		err = &net.OpError{Op: "writev", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("writev", werr)}
	}
	if err != nil {
		c.fail(err)
	}
	return n, err
}

// write writes what the socket takes: true when v is written, a write
// failed or (wait false) the send buffer is full; false to wait until the
// socket is writable.
func (w *rawWritev) write(fd uintptr) bool {
	n, done, err := rawsock.WriteAttempt(fd, &w.v)
	w.n += n
	w.err = err
	return done || !w.wait
}
