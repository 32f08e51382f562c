//go:build linux

package rawsock

import (
	"net"

	"golang.org/x/sys/unix"
)

// Acked returns how many bytes written on c the peer's TCP has
// acknowledged so far (TCP_INFO tcpi_bytes_acked, Linux 4.2+; a kernel
// older says 0 for ever) and how many are written and not acknowledged
// yet (SIOCOUTQ: in the socket's queue or in flight), looking through TLS
// to its connection. ok is false when c is no TCP socket. One
// getsockopt(2) and one ioctl(2); it never blocks.
func Acked(c net.Conn) (acked, unacked uint64, ok bool) {
	if nc, isTLS := c.(interface{ NetConn() net.Conn }); isTLS {
		c = nc.NetConn()
	}
	rc := Conn(c)
	if rc == nil {
		return 0, 0, false
	}
	var info *unix.TCPInfo
	var queued int
	var err, qerr error
	if cerr := rc.Control(func(fd uintptr) {
		info, err = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
		queued, qerr = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ)
	}); cerr != nil || err != nil || qerr != nil {
		return 0, 0, false
	}
	return info.Bytes_acked, uint64(max(queued, 0)), true
}
