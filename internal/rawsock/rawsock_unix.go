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
// syscall.RawConn.Read; n is -1 with the errno when it fails
// (syscall.EAGAIN: no data yet). On Linux, into a b of up to maxRawIO
// bytes it is a raw system call (rawio_linux.go says why).
func Read(fd uintptr, b []byte) (int, error) { return rawRead(fd, b) }

// Write is write(2) on fd, a non-blocking socket, for use inside
// syscall.RawConn.Write; n is -1 with the errno when it fails
// (syscall.EAGAIN: the send buffer is full). On Linux, up to maxRawIO
// bytes it is a raw system call.
func Write(fd uintptr, b []byte) (int, error) { return rawWrite(fd, b) }

// Writev is writev(2) on fd, a non-blocking socket, of v's first buffers
// (up to four non-empty ones), for use inside syscall.RawConn.Write; the
// caller advances v by n and calls again for the rest. n is -1 with the
// errno when it fails (syscall.EAGAIN: the send buffer is full); 0 when v
// holds no byte. On Linux, up to maxRawIO bytes it is a raw system call.
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

// maxRawIO is the most bytes a transfer may move as a raw system call
// (Linux); a longer one goes through syscall.Syscall (rawio_linux.go).
// 64 KiB copies in a few microseconds, under the 20 us after which sysmon
// would hand a thread's P to another in a system call.
const maxRawIO = 64 << 10
