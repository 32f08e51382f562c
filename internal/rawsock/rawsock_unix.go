//go:build unix

package rawsock

import (
	"net"
	"syscall"
)

// Conn returns c's socket, or nil when c is no plain socket (TLS).
func Conn(c net.Conn) syscall.RawConn {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}

// Read is read(2) on fd, a non-blocking socket, for use inside
// syscall.RawConn.Read: it reads at most maxRawIO bytes, and n is -1 with
// the errno when it fails (syscall.EAGAIN: no data yet). On Linux it is a
// raw system call (rawRead).
func Read(fd uintptr, b []byte) (int, error) { return rawRead(fd, b[:min(len(b), maxRawIO)]) }

// Write is write(2) on fd, a non-blocking socket, for use inside
// syscall.RawConn.Write: it writes at most maxRawIO bytes, and n is -1
// with the errno when it fails (syscall.EAGAIN: the send buffer is full).
// On Linux it is a raw system call (rawWrite).
func Write(fd uintptr, b []byte) (int, error) { return rawWrite(fd, b[:min(len(b), maxRawIO)]) }

// Writev is writev(2) on fd, a non-blocking socket, of v's first buffers
// (up to four non-empty ones, up to maxRawIO bytes), for use inside
// syscall.RawConn.Write; the caller advances v by n and calls again for
// the rest. n is -1 with the errno when it fails (syscall.EAGAIN: the
// send buffer is full); 0 when v holds no byte. On Linux it is a raw
// system call.
func Writev(fd uintptr, v [][]byte) (int, error) { return rawWritev(fd, v) }

// WriteAttempt writes what fd, a non-blocking socket, takes of v now
// (Writev, repeated while it takes everything offered), consuming v as it
// goes: the buffers written are set to nil and dropped from *v, a partly
// written one is cut. It returns the bytes written, done false when the
// socket's send buffer is full (wait until it is writable, for use inside
// syscall.RawConn.Write, and call again), or the errno of a failed write
// (done true).
func WriteAttempt(fd uintptr, v *[][]byte) (n int, done bool, err error) {
	for {
		for len(*v) > 0 && len((*v)[0]) == 0 {
			(*v)[0] = nil
			*v = (*v)[1:]
		}
		if len(*v) == 0 {
			return n, true, nil
		}
		m, err := rawWritev(fd, *v)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return n, false, nil
		case err != nil:
			return n, true, err
		}
		n += m
		for m > 0 {
			if m < len((*v)[0]) {
				(*v)[0] = (*v)[0][m:]
				break
			}
			m -= len((*v)[0])
			(*v)[0] = nil
			*v = (*v)[1:]
		}
	}
}

// maxRawIO bounds one Read or Write. A raw system call keeps its thread's
// P and cannot be preempted, so a collection's stop-the-world waits for
// it; copying 256 KiB takes tens of microseconds. Larger transfers take
// more calls, which callers already loop over (partial reads and writes).
const maxRawIO = 256 << 10
