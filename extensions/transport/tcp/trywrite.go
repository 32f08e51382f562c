package tcp

import (
	"errors"
	"net"
	"os"
	"syscall"

	"github.com/airnode/airnode/internal/rawsock"
	"github.com/airnode/airnode/spi"
)

// tryStream is a stream on a plain socket: it also implements
// spi.TryWriter. Streams over TLS are plain streams.
type tryStream struct {
	*stream
	attempt func(fd uintptr) bool // bound once: RawConn.Write takes a func
	p       []byte
	n       int
	err     error
}

func newTryStream(st *stream) *tryStream {
	t := &tryStream{stream: st}
	t.attempt = t.write
	return t
}

// TryWrite writes what the socket's send buffer takes at once: one
// write(2) that does not wait (0 bytes when the buffer is full). Any
// error but a full buffer fails the session, as with Write.
func (t *tryStream) TryWrite(p []byte) (int, error) {
	t.p = p
	err := t.s.raw.Write(t.attempt)
	n, werr := t.n, t.err
	t.p, t.n, t.err = nil, 0, nil
	if err == nil && werr != nil {
		if errors.Is(werr, syscall.EAGAIN) {
			return 0, nil
		}
		err = &net.OpError{Op: "write", Net: "tcp", Source: t.s.conn.LocalAddr(), Addr: t.s.conn.RemoteAddr(), Err: os.NewSyscallError("write", werr)}
	}
	if err != nil {
		t.s.fail(err)
		return 0, err
	}
	return n, nil
}

// write is the one attempt: done whatever happened (true), so RawConn.Write
// never waits for the socket to become writable.
func (t *tryStream) write(fd uintptr) bool {
	n, err := rawsock.Write(fd, t.p)
	if n < 0 {
		n = 0
	}
	t.n, t.err = n, err
	return true
}

var _ spi.TryWriter = (*tryStream)(nil)
