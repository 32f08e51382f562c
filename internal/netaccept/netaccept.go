// Package netaccept accepts connections the way net/http's server does: a
// temporary failure (out of file descriptors: EMFILE, ENFILE) is retried
// with a backoff from 5 ms doubling to 1 s instead of ending the accept
// loop, and logged at Warn (net/http's "http: Accept error: ...; retrying
// in 5ms"). Shared by the bundled transports.
//
// Log lines of one burst of failures: one per retry while the backoff
// doubles (5 ms .. 1 s: 9 lines), then one every LogEvery retries at 1 s
// (about every 10 s), each with the failures so far; when accepting works
// again, one Info line with the failures and how long it lasted. Every
// failure counts in counters.Transport.AcceptErrors
// (airnode_accept_errors_total).
//
// OpenFileLimit and DefaultAccepts give a provider's default connection
// limit (URL key accepts, which the kernel's exchange server applies):
// the RLIMIT_NOFILE soft limit minus a reserve of max(64, 10 %), so that
// consumers never take the descriptors the provider needs itself.
package netaccept

import (
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airnode/airnode/internal/counters"
)

// Backoff bounds: the first retry waits MinBackoff, each next one twice as
// long, up to MaxBackoff (net/http's server values).
const (
	MinBackoff = 5 * time.Millisecond
	MaxBackoff = time.Second
)

// LogEvery is how many retries at MaxBackoff pass between two log lines of
// one burst of failures.
const LogEvery = 10

// Acceptor wraps a listener's accept loop. Safe for concurrent use.
type Acceptor struct {
	l      net.Listener
	prefix string // the transport's name, prefixing log lines ("smux")
	log    atomic.Pointer[slog.Logger]
	closed chan struct{} // closed by Close: cuts a backoff short
	once   sync.Once
}

// New returns an Acceptor on l whose log lines start with prefix (the
// transport's name). It logs to slog.Default() until UseLogger.
func New(l net.Listener, prefix string) *Acceptor {
	return &Acceptor{l: l, prefix: prefix, closed: make(chan struct{})}
}

// UseLogger makes the Acceptor log to lg (nil: slog.Default()).
func (a *Acceptor) UseLogger(lg *slog.Logger) { a.log.Store(lg) }

func (a *Acceptor) logger() *slog.Logger {
	if lg := a.log.Load(); lg != nil {
		return lg
	}
	return slog.Default()
}

// Accept returns the next connection, retrying temporary errors with
// backoff (logged, counted). Any other error (net.ErrClosed after Close) is
// returned; so is the temporary error when Close cuts its backoff short.
func (a *Acceptor) Accept() (net.Conn, error) {
	var (
		backoff  time.Duration
		failures int
		since    time.Time
	)
	for {
		c, err := a.l.Accept()
		if err == nil {
			if failures > 0 {
				a.logger().Info(a.prefix+": accepting connections again", "listen", a.l.Addr().String(),
					"failures", failures, "for", time.Since(since).Round(time.Millisecond))
			}
			return c, nil
		}
		ne, ok := err.(net.Error)
		if !ok || !ne.Temporary() { // deprecated, yet how accept reports EMFILE (net/http relies on it too)
			return nil, err
		}
		select {
		case <-a.closed:
			return nil, err
		default:
		}
		counters.Transport.AcceptErrors.Inc()
		if failures == 0 {
			since = time.Now()
		}
		failures++
		var log bool
		if backoff, log = next(backoff, failures); log {
			a.logger().Warn(a.prefix+": accept failed; retrying (out of file descriptors? see ulimit -n)",
				"listen", a.l.Addr().String(), "err", err, "retry_in", backoff, "failures", failures)
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-a.closed:
			t.Stop()
			return nil, err
		}
	}
}

// next returns the backoff after prev for the failures-th failure of a
// burst, and whether to log that retry: one line per doubling, then one
// every LogEvery retries at MaxBackoff.
func next(prev time.Duration, failures int) (time.Duration, bool) {
	backoff := min(max(2*prev, MinBackoff), MaxBackoff)
	return backoff, backoff != prev || failures%LogEvery == 0
}

// Addr returns the listener's address.
func (a *Acceptor) Addr() net.Addr { return a.l.Addr() }

// Close closes the listener and cuts a backoff in progress short.
// Idempotent: later calls return nil.
func (a *Acceptor) Close() error {
	var err error
	a.once.Do(func() {
		close(a.closed)
		err = a.l.Close()
	})
	return err
}
