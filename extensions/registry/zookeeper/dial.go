package zookeeper

import (
	"encoding/binary"
	"errors"
	"net"
	"sync/atomic"
	"time"

	"github.com/airnode/airnode/spi"
)

// handshakeConn bounds zk's session handshake and notes when the server
// was last heard. go-zookeeper gives the connect request and its answer ten
// receive timeouts (200 s for a 30 s session); a server that accepts a
// connection while it is still starting may never answer it, which would
// stall reconnection for minutes. The first write and read deadlines (the
// handshake's) are cut to limit; later ones pass unchanged. Every read
// that returns bytes marks heard, and the connection's first answer, the
// session handshake's, sets granted.
type handshakeConn struct {
	net.Conn
	limit   time.Duration
	heard   *contactClock
	granted *atomic.Int64 // ns: the session timeout the server granted
	sets    atomic.Int32  // non-zero deadlines set so far
	head    []byte        // the first connectHead bytes received (zk reads from one goroutine at a time)
	refused *refusals
	wrote   atomic.Bool // the connect request has been (partly) written
	closed  atomic.Bool // the server closed the connection before answering (counted in refused)
}

// refusals counts, for a zk handle, the connections in a row that the
// server closed after the session request without answering a byte:
// how ZooKeeper refuses a session request it will not serve ("Refusing
// session request for client ... as it has seen zxid ...": a server
// restarted with empty data does not know the session, whose client has
// seen a higher zxid than the server's; also a server not serving yet,
// starting or without a quorum). Any answer resets it; a dial error or a
// handshake that times out leaves it as it is.
type refusals struct {
	n    atomic.Int32
	kick func() // wakes the handle's session loop
}

// refusedInARow is how many connections in a row the server list has
// closed at the handshake.
func (r *refusals) refusedInARow() int { return int(r.n.Load()) }

// connectHead is how many bytes of a connection's first answer hold the
// session timeout the server granted: ZooKeeper's ConnectResponse, framed,
// is [int32 length][int32 protocolVersion][int32 timeOut, ms][int64
// sessionId][buffer passwd], big-endian (jute; go-zookeeper's
// connectResponse). go-zookeeper sends its ConnectRequest first on every
// connection it dials and reads this answer before anything else.
const connectHead = 4 + 4 + 4 + 8

// Read reads from the server, marks heard when bytes came and reads the
// granted session timeout from the first connectHead bytes.
func (c *handshakeConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.heard.mark()
		if len(c.head) == 0 && c.refused != nil {
			c.refused.n.Store(0)
		}
		if len(c.head) < connectHead {
			c.readHead(b[:n])
		}
	} else if err != nil && len(c.head) == 0 && c.wrote.Load() && c.refused != nil && !isTimeout(err) && c.closed.CompareAndSwap(false, true) {
		c.refused.n.Add(1)
		if c.refused.kick != nil {
			c.refused.kick()
		}
	}
	return n, err
}

// Write writes to the server and notes that the session request (the
// connection's first bytes) has gone.
func (c *handshakeConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if n > 0 {
		c.wrote.Store(true)
	}
	return n, err
}

// isTimeout reports whether err is a deadline that passed (a server that
// does not answer, not one that closes the connection).
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// readHead collects the first connectHead bytes of the connection and,
// once it has them, stores the session timeout of a ConnectResponse that
// grants a session (sessionId != 0; a server refusing an expired session
// answers timeOut 0 and sessionId 0) in granted. The server sets timeOut
// to the timeout asked, bounded to its minSessionTimeout..maxSessionTimeout
// (2 to 20 x tickTime by default); go-zookeeper keeps it unexported
// (Conn.sessionTimeoutMs).
func (c *handshakeConn) readHead(b []byte) {
	c.head = append(c.head, b[:min(len(b), connectHead-len(c.head))]...)
	if len(c.head) < connectHead {
		return
	}
	size := int32(binary.BigEndian.Uint32(c.head[0:]))
	ms := int32(binary.BigEndian.Uint32(c.head[8:]))
	id := int64(binary.BigEndian.Uint64(c.head[12:]))
	if size >= connectHead-4 && ms > 0 && id != 0 {
		c.granted.Store(int64(time.Duration(ms) * time.Millisecond))
	}
}

// contactClock holds when a zk handle last received bytes from a server,
// any of its connections: the last contact with ZooKeeper. go-zookeeper
// does not expose it; it notices a dead connection only when its receive
// timeout (two thirds of the session timeout) passes without a byte, while
// the server expires the session session.timeout after it last heard the
// client, which is about when the client last heard it (the answer to its
// last ping or request: pings go every third of the session timeout). The
// zero value is "never".
type contactClock struct{ since atomic.Int64 } // spi.Mono reading (monotonic: a wall-clock step does not move it); 0: never

func (c *contactClock) mark() { c.since.Store(int64(spi.Mono())) }

// at returns the last contact, zero if there has been none.
func (c *contactClock) at() time.Time {
	d := c.since.Load()
	if d == 0 {
		return time.Time{}
	}
	return spi.MonoTime(time.Duration(d))
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
// limit, mark heard when they receive bytes, store in granted the
// session timeout the server granted (ns) and count in refused the
// connections closed at the handshake; lastErr keeps the last failed
// dial's error.
func dialer(limit time.Duration, lastErr *atomic.Pointer[error], heard *contactClock, granted *atomic.Int64, refused *refusals) func(network, address string, timeout time.Duration) (net.Conn, error) {
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		c, err := net.DialTimeout(network, address, timeout)
		if err != nil {
			lastErr.Store(&err)
			return nil, err
		}
		lastErr.Store(nil)
		return &handshakeConn{Conn: c, limit: limit, heard: heard, granted: granted, refused: refused}, nil
	}
}

// handshakeLimit is the handshake bound for a registry: connect.timeout,
// at least one second, at most two thirds of the session timeout (zk's
// receive timeout).
func handshakeLimit(p params) time.Duration {
	return min(max(p.connectTimeout, time.Second), p.sessionTimeout*2/3)
}
