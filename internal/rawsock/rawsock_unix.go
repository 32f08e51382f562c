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

// Read is read(2) on fd, for use inside syscall.RawConn.Read.
func Read(fd uintptr, b []byte) (int, error) { return syscall.Read(int(fd), b) }

// Write is write(2) on fd, for use inside syscall.RawConn.Write.
func Write(fd uintptr, b []byte) (int, error) { return syscall.Write(int(fd), b) }
