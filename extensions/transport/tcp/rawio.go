package tcp

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"

	"github.com/airnode/airnode/internal/rawsock"
)

// rawIO reads and writes a plain socket through its syscall.RawConn with
// rawsock.Read and rawsock.Write (raw system calls: no wake-up of the
// runtime's sysmon thread per call at one caller; rawsock's rawRead says
// why), as net.Conn's Read and Write would otherwise: a read waits on the
// poller until there is data and returns what one read(2) gives; a write
// waits until all of it is written. Deadlines and Close work as on the
// net.Conn (the RawConn's wait returns their errors).
type rawIO struct {
	s *Session

	// read is the state of one Read; only the stream's reader reads.
	rb     []byte
	rn     int
	rerr   error
	rdOnce func(fd uintptr) bool // readOnce, bound once: RawConn.Read takes a func

	// write is the state of one Write, on wmu: Write is safe for
	// concurrent use, as net.Conn's is.
	wmu   sync.Mutex
	wv    [][]byte  // what is left to write: wbuf[:1] during a Write
	wbuf  [1][]byte // wv's array, so a Write allocates nothing
	wn    int
	werr  error
	wrAll func(fd uintptr) bool // writeAll, bound once
}

func newRawIO(s *Session) *rawIO {
	r := &rawIO{s: s}
	r.rdOnce, r.wrAll = r.readOnce, r.writeAll
	return r
}

// Read is net.Conn.Read through the RawConn.
func (r *rawIO) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	r.rb = b
	err := r.s.raw.Read(r.rdOnce)
	n, rerr := r.rn, r.rerr
	r.rb, r.rn, r.rerr = nil, 0, nil
	if err == nil && rerr != nil {
		err = r.opError("read", rerr)
	}
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, io.EOF // the peer shut its side down
	}
	return n, nil
}

// readOnce is one non-blocking read attempt: true when done (data, end of
// stream or error), false to wait until the socket is readable.
func (r *rawIO) readOnce(fd uintptr) bool {
	for {
		r.rn, r.rerr = rawsock.Read(fd, r.rb)
		if r.rerr != syscall.EINTR {
			break
		}
	}
	if r.rerr == syscall.EAGAIN {
		r.rn, r.rerr = 0, nil
		return false
	}
	if r.rn < 0 {
		r.rn = 0
	}
	return true
}

// Write is net.Conn.Write through the RawConn: all of b, or the bytes
// written before an error.
func (r *rawIO) Write(b []byte) (int, error) {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	r.wbuf[0] = b
	r.wv = r.wbuf[:]
	err := r.s.raw.Write(r.wrAll)
	n, werr := r.wn, r.werr
	r.wbuf[0], r.wv, r.wn, r.werr = nil, nil, 0, nil
	if err == nil && werr != nil {
		err = r.opError("write", werr)
	}
	return n, err
}

// writeAll writes what the socket takes: true when all of it is written
// or a write failed, false to wait until the socket is writable.
func (r *rawIO) writeAll(fd uintptr) bool {
	n, done, err := rawsock.WriteAttempt(fd, &r.wv)
	r.wn += n
	r.werr = err
	return done
}

// opError is the error net.Conn would return for errno.
func (r *rawIO) opError(op string, errno error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: r.s.conn.LocalAddr(), Addr: r.s.conn.RemoteAddr(), Err: os.NewSyscallError(op, errno)}
}
