package zookeeper

import (
	"net"
	"sync/atomic"
	"time"
)

// handshakeConn bounds zk's session handshake and notes when the server
// was last heard. go-zookeeper gives the connect request and its answer ten
// receive timeouts (200 s for a 30 s session); a server that accepts a
// connection while it is still starting may never answer it, which would
// stall reconnection for minutes. The first write and read deadlines (the
// handshake's) are cut to limit; later ones pass unchanged. Every read
// that returns bytes marks heard.
type handshakeConn struct {
	net.Conn
	limit time.Duration
	heard *contactClock
	sets  atomic.Int32 // non-zero deadlines set so far
}

// Read reads from the server and marks heard when bytes came.
func (c *handshakeConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.heard.mark()
	}
	return n, err
}

// epoch is the origin of contactClock's readings: durations since it keep
// the monotonic clock (a wall-clock step does not move them).
var epoch = time.Now()

// contactClock holds when a zk handle last received bytes from a server,
// any of its connections: the last contact with ZooKeeper. go-zookeeper
// does not expose it; it notices a dead connection only when its receive
// timeout (two thirds of the session timeout) passes without a byte, while
// the server expires the session session.timeout after it last heard the
// client, which is about when the client last heard it (the answer to its
// last ping or request: pings go every third of the session timeout). The
// zero value is "never".
type contactClock struct{ since atomic.Int64 } // ns after epoch; 0: never

func (c *contactClock) mark() { c.since.Store(int64(time.Since(epoch))) }

// at returns the last contact, zero if there has been none.
func (c *contactClock) at() time.Time {
	d := c.since.Load()
	if d == 0 {
		return time.Time{}
	}
	return epoch.Add(time.Duration(d))
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
// limit and mark heard when they receive bytes; lastErr keeps the last
// failed dial's error.
func dialer(limit time.Duration, lastErr *atomic.Pointer[error], heard *contactClock) func(network, address string, timeout time.Duration) (net.Conn, error) {
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		c, err := net.DialTimeout(network, address, timeout)
		if err != nil {
			lastErr.Store(&err)
			return nil, err
		}
		lastErr.Store(nil)
		return &handshakeConn{Conn: c, limit: limit, heard: heard}, nil
	}
}

// handshakeLimit is the handshake bound for a registry: connect.timeout,
// at least one second, at most two thirds of the session timeout (zk's
// receive timeout).
func handshakeLimit(p params) time.Duration {
	return min(max(p.connectTimeout, time.Second), p.sessionTimeout*2/3)
}
