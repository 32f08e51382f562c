package zookeeper

import (
	"net"
	"sync/atomic"
	"time"
)

// handshakeConn bounds zk's session handshake. go-zookeeper gives the
// connect request and its answer ten receive timeouts (200 s for a 30 s
// session); a server that accepts a connection while it is still starting
// may never answer it, which would stall reconnection for minutes. The first
// write and read deadlines (the handshake's) are cut to limit; later ones
// pass unchanged.
type handshakeConn struct {
	net.Conn
	limit time.Duration
	sets  atomic.Int32 // non-zero deadlines set so far
}

func (c *handshakeConn) bound(t time.Time) time.Time {
	if t.IsZero() || c.sets.Add(1) > 2 {
		return t
	}
	if limit := time.Now().Add(c.limit); t.After(limit) {
		return limit
	}
	return t
}

func (c *handshakeConn) SetWriteDeadline(t time.Time) error {
	return c.Conn.SetWriteDeadline(c.bound(t))
}

func (c *handshakeConn) SetReadDeadline(t time.Time) error {
	return c.Conn.SetReadDeadline(c.bound(t))
}

// dialer returns a zk.Dialer whose connections bound the handshake to
// limit.
func dialer(limit time.Duration, lastErr *atomic.Pointer[error]) func(network, address string, timeout time.Duration) (net.Conn, error) {
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		c, err := net.DialTimeout(network, address, timeout)
		if err != nil {
			lastErr.Store(&err)
			return nil, err
		}
		lastErr.Store(nil)
		return &handshakeConn{Conn: c, limit: limit}, nil
	}
}

// handshakeLimit is the handshake bound for a registry: connect.timeout,
// at least one second, at most two thirds of the session timeout (zk's
// receive timeout).
func handshakeLimit(p params) time.Duration {
	return min(max(p.connectTimeout, time.Second), p.sessionTimeout*2/3)
}
