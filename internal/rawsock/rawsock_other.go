//go:build !unix

package rawsock

import (
	"errors"
	"net"
	"syscall"
)

// Conn returns nil: callers fall back to Read off unix.
func Conn(net.Conn) syscall.RawConn { return nil }

// Read is unsupported off unix.
func Read(uintptr, []byte) (int, error) { return 0, errors.ErrUnsupported }

// Write is unsupported off unix.
func Write(uintptr, []byte) (int, error) { return 0, errors.ErrUnsupported }

// Writev is unsupported off unix.
func Writev(uintptr, [][]byte) (int, error) { return 0, errors.ErrUnsupported }

// WriteAttempt is unsupported off unix.
func WriteAttempt(uintptr, *[][]byte) (int, bool, error) { return 0, true, errors.ErrUnsupported }
