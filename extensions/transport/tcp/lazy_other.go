//go:build !unix

package tcp

import (
	"errors"
	"net"
	"syscall"
)

// rawConn returns nil: ReadLazy falls back to Read off unix.
func rawConn(net.Conn) syscall.RawConn { return nil }

func sysRead(uintptr, []byte) (int, error) { return 0, errors.ErrUnsupported }
