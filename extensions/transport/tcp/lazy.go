package tcp

import (
	"io"
	"net"
	"os"
	"syscall"

	"github.com/airnode/airnode/internal/rawsock"
)

// LazyReader is implemented by this transport's streams: a reader that
// should hold no buffer while its connection is idle can use ReadLazy
// instead of Read (the exchange's read buffer, kept for the life of a
// connection, is most of what an idle connection costs its provider).
type LazyReader interface {
	ReadLazy(get func() []byte, put func([]byte)) ([]byte, int, error)
}

// ReadLazy is Read for a reader that holds no buffer while it waits. It
// blocks until the connection has data, then reads into a buffer from get
// and returns that buffer, now the caller's, with the count n > 0 (and err
// nil). A read attempt that finds no data gives its buffer back through
// put before waiting, so get and put may each be called more than once;
// when ReadLazy returns, every buffer from get but the returned one has
// gone back through put. get must return a buffer of at least one byte.
//
// On failure it returns a nil buffer, 0 and the error Read would return:
// io.EOF at the end of the stream, an error matching net.ErrClosed once
// the session is closed, os.ErrDeadlineExceeded after a read deadline.
// Any error but a deadline kills the session, as with Read.
//
// It costs the same system calls as Read (a read that finds nothing, the
// wait, the read): the wait goes through the connection's syscall.RawConn.
// Over TLS, or where the socket is not reachable, it falls back to get and
// Read, which holds the buffer while it waits.
func (st *stream) ReadLazy(get func() []byte, put func([]byte)) ([]byte, int, error) {
	if st.s.raw == nil {
		b := get()
		n, err := st.Read(b)
		if n > 0 {
			return b, n, nil // a later Read reports err again: the connection stays failed
		}
		put(b)
		return nil, 0, err
	}
	if st.lazy == nil {
		st.lazy = &lazyRead{}
		st.lazy.attempt = st.lazy.read // bound once: RawConn.Read takes a func
	}
	lr := st.lazy
	lr.get, lr.put = get, put
	err := st.s.raw.Read(lr.attempt)
	b, n, rerr := lr.b, lr.n, lr.err
	*lr = lazyRead{attempt: lr.attempt} // keep no buffer nor callback
	if err == nil && rerr != nil {
		err = &net.OpError{Op: "read", Net: "tcp", Source: st.s.conn.LocalAddr(), Addr: st.s.conn.RemoteAddr(), Err: os.NewSyscallError("read", rerr)}
	}
	if err == nil && n == 0 {
		err = io.EOF // the peer shut its side down
	}
	if err != nil {
		if b != nil {
			put(b)
		}
		st.s.fail(err)
		return nil, 0, err
	}
	return b, n, nil
}

// lazyRead is the state of one ReadLazy, kept on the stream so that a call
// allocates nothing.
type lazyRead struct {
	get     func() []byte
	put     func([]byte)
	b       []byte
	n       int
	err     error
	attempt func(fd uintptr) bool // read, bound
}

// read is one non-blocking read attempt on fd, under the connection's read
// lock: true when it is done (data, end of stream or error), false to wait
// until fd is readable, with the buffer given back.
func (lr *lazyRead) read(fd uintptr) bool {
	if lr.b == nil {
		lr.b = lr.get()
	}
	for {
		lr.n, lr.err = rawsock.Read(fd, lr.b)
		if lr.err != syscall.EINTR {
			break
		}
	}
	if lr.err == syscall.EAGAIN || lr.err == syscall.EWOULDBLOCK {
		lr.put(lr.b)
		lr.b, lr.err = nil, nil
		return false
	}
	if lr.err != nil || lr.n < 0 {
		lr.n = 0
	}
	return true
}
