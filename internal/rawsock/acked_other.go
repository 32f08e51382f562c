//go:build !linux

package rawsock

import "net"

// Acked is unsupported off Linux: ok is false.
func Acked(net.Conn) (acked, unacked uint64, ok bool) { return 0, 0, false }
