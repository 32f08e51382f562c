//go:build unix

package smux

import (
	"net"
	"syscall"
)

// rawConn returns c's socket for the read-ahead, or nil when c is no plain
// socket (TLS).
func rawConn(c net.Conn) syscall.RawConn {
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

func sysRead(fd uintptr, b []byte) (int, error) { return syscall.Read(int(fd), b) }
