package zookeeper

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
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
	kick func()                 // wakes the handle's session loop
	last atomic.Pointer[string] // the address of the server that closed the last one
	told atomic.Bool            // "not serving" found and logged since the last answer (confirmRefusal; notServing)
	// serving: since the last answer, a probe of a server that closed a
	// session request was granted (confirmRefusal): it serves, so the
	// next refusal is this session's (servingSeen)
	serving atomic.Bool
}

// servingSeen reports whether confirmRefusal has found, since a server
// last answered a handshake, a server that closed one serving: one more
// refusal then makes the session gone for good (staleFor).
func (r *refusals) servingSeen() bool { return r.serving.Load() }

// reset forgets the refusals counted so far (an answer came, or the
// refusal was judged a server not serving: confirmRefusal).
func (r *refusals) reset() { r.n.Store(0) }

// notServing reports whether confirmRefusal has found, since a server
// last answered a handshake, that the server closing them serves nobody
// (loading its data, no quorum, a proxy to a ZooKeeper that is down):
// the session is held then (staleFor).
func (r *refusals) notServing() bool { return r.told.Load() }

// lastAddr returns the address of the server that closed the last
// connection counted, "" before any.
func (r *refusals) lastAddr() string {
	if a := r.last.Load(); a != nil {
		return *a
	}
	return ""
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
			c.refused.reset()
			c.refused.told.Store(false)
			c.refused.serving.Store(false)
		}
		if len(c.head) < connectHead {
			c.readHead(b[:n])
		}
	} else if err != nil && len(c.head) == 0 && c.wrote.Load() && c.refused != nil && !isTimeout(err) && c.closed.CompareAndSwap(false, true) {
		addr := c.RemoteAddr().String()
		c.refused.last.Store(&addr)
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

// downClock notes, for a zk handle, the last moment every server it
// dials was seen down: its last dial refused (ECONNREFUSED: nothing
// listens on the address, the ZooKeeper process is not running there).
// A ZooKeeper that is down expires no session, and one that starts
// again with its data restores every session it had with a fresh
// timeout (its session tracker reloads them from the snapshot and the
// transaction log: SessionTrackerImpl, ZooKeeper 3.5 to 3.9), so a
// lost session cannot have expired before that moment plus its
// timeout, whatever the time since this client last heard ZooKeeper
// (Registry.expiryClockLocked). A dial that connects, or fails any
// other way (a timeout: a dead path, behind which the server may serve
// others and expire the session), says nothing of the kind. Safe for
// concurrent use; the zero value is "never".
type downClock struct {
	mu      sync.Mutex
	refused map[string]time.Duration // address -> spi.Mono reading of its last dial, refused; absent: its last dial was not refused
	dialled map[string]bool          // every address dialled
	since   atomic.Int64             // spi.Mono reading: the last moment every address dialled was refused; 0: never
}

// dial records the outcome of a dial of addr (err nil: connected).
func (d *downClock) dial(addr string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dialled == nil {
		d.dialled, d.refused = map[string]bool{}, map[string]time.Duration{}
	}
	d.dialled[addr] = true
	if err == nil || !errors.Is(err, syscall.ECONNREFUSED) {
		delete(d.refused, addr)
		return
	}
	d.refused[addr] = spi.Mono()
	if len(d.refused) < len(d.dialled) {
		return
	}
	// every address refused its last dial: the earliest of those is a
	// moment by which each server was seen down at least once since it
	// last accepted a connection
	var earliest time.Duration
	for _, at := range d.refused {
		if earliest == 0 || at < earliest {
			earliest = at
		}
	}
	if int64(earliest) > d.since.Load() {
		d.since.Store(int64(earliest))
	}
}

// at returns the last moment every server dialled was seen down, zero
// if never.
func (d *downClock) at() time.Time {
	v := d.since.Load()
	if v == 0 {
		return time.Time{}
	}
	return spi.MonoTime(time.Duration(v))
}

// dialer returns a zk.Dialer whose connections bound the handshake to
// limit, mark heard when they receive bytes, store in granted the
// session timeout the server granted (ns) and count in refused the
// connections closed at the handshake; lastErr keeps the last failed
// dial's error, and down notes the servers seen down.
func dialer(limit time.Duration, lastErr *atomic.Pointer[error], heard *contactClock, granted *atomic.Int64, refused *refusals, down *downClock) func(network, address string, timeout time.Duration) (net.Conn, error) {
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		c, err := net.DialTimeout(network, address, timeout)
		down.dial(address, err)
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

// probeNewSession asks the server at addr for a brand-new session (zxid 0,
// session 0, the shortest timeout it grants) on a connection of its own,
// waiting at most limit, and closes that session at once when granted.
// It tells the two servers that close a client's session request without
// a byte apart: one that serves (restarted with empty data, it refuses a
// session it does not know, whose client has seen a higher zxid, and
// grants a new one) from one that serves nobody (loading its data, no
// quorum, or a TCP proxy in front of a ZooKeeper that is down: it closes
// this request too, or does not accept it). seen says what happened, for
// the log.
func probeNewSession(addr string, limit time.Duration) (granted bool, seen string) {
	c, err := net.DialTimeout("tcp", addr, limit)
	if err != nil {
		return false, "a new session request to " + addr + " could not connect: " + err.Error()
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(limit))
	// ConnectRequest, framed (jute, big-endian): protocolVersion 0,
	// lastZxidSeen 0, timeOut 1 ms (the server raises it to its
	// minSessionTimeout), sessionId 0, passwd 16 zero bytes, as
	// go-zookeeper sends a first one.
	req := make([]byte, 4+4+8+4+8+4+16)
	binary.BigEndian.PutUint32(req[0:], uint32(len(req)-4))
	binary.BigEndian.PutUint32(req[16:], 1)
	binary.BigEndian.PutUint32(req[28:], 16)
	if _, err := c.Write(req); err != nil {
		return false, "a new session request to " + addr + " could not be sent: " + err.Error()
	}
	head := make([]byte, connectHead)
	n, err := io.ReadFull(c, head)
	switch {
	case n == 0 && isTimeout(err):
		return false, "a new session request to " + addr + " got no answer within " + limit.String()
	case n == 0:
		return false, "a new session request to " + addr + " was closed without a byte too"
	case err != nil:
		return false, fmt.Sprintf("a new session request to %s got %d bytes, then %v", addr, n, err)
	}
	id := binary.BigEndian.Uint64(head[12:])
	if id == 0 {
		return false, "a new session request to " + addr + " was answered without a session"
	}
	// closeSession: [length 8][xid 1][type -11]; the session would
	// otherwise live its minSessionTimeout.
	bye := make([]byte, 12)
	binary.BigEndian.PutUint32(bye[0:], 8)
	binary.BigEndian.PutUint32(bye[4:], 1)
	binary.BigEndian.PutUint32(bye[8:], uint32(0xffffffff-10)) // -11
	_, _ = c.Write(bye)
	_, _ = c.Read(head[:1]) // its answer, or the close: the session is gone either way
	return true, fmt.Sprintf("%s granted a new session request at once (0x%x)", addr, id)
}
