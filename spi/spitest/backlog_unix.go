//go:build unix

package spitest

import (
	"net"
	"syscall"
)

// shrinkBacklog sets the accept backlog of l to zero, so that once one
// connection waits unaccepted the kernel drops further SYNs and dials hang.
func shrinkBacklog(l net.Listener) bool {
	tl, ok := l.(*net.TCPListener)
	if !ok {
		return false
	}
	rc, err := tl.SyscallConn()
	if err != nil {
		return false
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) { lerr = syscall.Listen(int(fd), 0) }); err != nil {
		return false
	}
	return lerr == nil
}
