// Package rawsock gives the transports a socket's raw descriptor, so they
// can wait for data without holding a read buffer (syscall.RawConn.Read
// waits on the poller; the read itself happens only once data is there).
// Off unix, and for connections that are no plain socket (TLS), Conn
// returns nil and callers fall back to net.Conn.Read.
package rawsock
