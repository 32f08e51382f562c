//go:build !unix

package smux

import (
	"errors"
	"net"
	"syscall"
)

// rawConn returns nil: no read-ahead off unix.
func rawConn(net.Conn) syscall.RawConn { return nil }

func sysRead(uintptr, []byte) (int, error) { return 0, errors.ErrUnsupported }
