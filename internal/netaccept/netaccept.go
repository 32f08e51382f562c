// Package netaccept accepts connections the way net/http's server does: a
// temporary failure (out of file descriptors) is retried with a backoff
// from 5 ms doubling to 1 s instead of ending the accept loop. Shared by the
// bundled transports.
package netaccept

import (
	"net"
	"time"
)

// Accept returns the next connection from l, retrying temporary errors
// with backoff. Any other error (net.ErrClosed after Close) is returned.
func Accept(l net.Listener) (net.Conn, error) {
	var backoff time.Duration
	for {
		c, err := l.Accept()
		if err == nil {
			return c, nil
		}
		if ne, ok := err.(net.Error); ok && ne.Temporary() { // deprecated, yet how accept reports EMFILE (net/http relies on it too)
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			time.Sleep(backoff)
			continue
		}
		return nil, err
	}
}
