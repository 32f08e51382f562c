// Package netaccept accepts connections the way net/http's server does: a
// temporary failure (out of file descriptors: EMFILE, ENFILE) is retried
// with a backoff from 5 ms doubling to 1 s instead of ending the accept
// loop, and logged at Warn (net/http's "http: Accept error: ...; retrying
// in 5ms"). Shared by the bundled transports.
//
// Log lines of one burst of failures: one per retry while the backoff
// doubles (5 ms .. 1 s: 9 lines), then at most one every LogInterval
// (10 s), each with the failures so far; when accepting works again, one
// Info line with the failures and how long it lasted. A listener hovering
// at its descriptor limit, accepting a connection and failing the next,
// stays in one burst until LogInterval passes with no failure: a brief
// recovery within LogInterval of the last Info line logs nothing of its
// own and is counted (brief_recoveries) in the burst's next line, Warn or
// Info. Every failure counts in counters.Transport.AcceptErrors
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

// LogInterval is the least time between two log lines of one burst of
// failures once its backoff stopped doubling.
const LogInterval = 10 * time.Second

// Acceptor wraps a listener's accept loop. Safe for concurrent use.
type Acceptor struct {
	l      net.Listener
	prefix string // the transport's name, its log lines' transport attribute ("smux")
	log    atomic.Pointer[slog.Logger]
	closed chan struct{} // closed by Close: cuts a backoff short
	once   sync.Once
	now    func() time.Time // the clock of the log lines' rate bounds (tests)

	mu sync.Mutex
	b  burst // the current burst of failures, for its log lines
}

// burst is the state of one burst of accept failures, for its log lines.
type burst struct {
	failures  int           // in the burst (0: none)
	since     time.Time     // its first failure
	last      time.Time     // its last failure
	maxLogged time.Duration // the longest backoff a Warn line gave
	lastLog   time.Time     // its last Warn line
	lastInfo  time.Time     // its last Info line
	down      bool          // a failure since the last accept
	flaps     int           // brief recoveries not yet in a line
}

// New returns an Acceptor on l whose log lines name prefix as their transport (the
// transport's name). It logs to slog.Default() until UseLogger.
func New(l net.Listener, prefix string) *Acceptor {
	return &Acceptor{l: l, prefix: prefix, closed: make(chan struct{}), now: time.Now}
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
	var backoff time.Duration
	for {
		c, err := a.l.Accept()
		if err == nil {
			a.accepted()
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
		backoff = min(max(2*backoff, MinBackoff), MaxBackoff)
		a.failed(err, backoff)
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-a.closed:
			t.Stop()
			return nil, err
		}
	}
}

// failed notes a failure whose retry waits backoff, logging it when due
// (logDue). A failure LogInterval or more after the burst's last one
// begins a new burst.
func (a *Acceptor) failed(err error, backoff time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	b := &a.b
	now := a.now()
	if b.failures > 0 && now.Sub(b.last) >= LogInterval {
		*b = burst{flaps: b.flaps} // brief recoveries not yet in a line go in the next
	}
	if b.failures == 0 {
		b.since = now
	}
	b.failures++
	b.last, b.down = now, true
	if !logDue(backoff, b.maxLogged, b.lastLog, now) {
		return
	}
	b.maxLogged, b.lastLog = max(b.maxLogged, backoff), now
	attrs := []any{"component", "transport", "transport", a.prefix, "listen", a.l.Addr().String(), "err", err, "retry_in", backoff, "failures", b.failures}
	if b.flaps > 0 {
		attrs = append(attrs, "brief_recoveries", b.flaps)
		b.flaps = 0
	}
	a.logger().Warn("accept failed; retrying (out of file descriptors? see ulimit -n)", attrs...)
}

// logDue reports whether a failure whose retry waits backoff gets a line:
// while the burst's backoff doubles past the longest a line gave
// (maxLogged), and then once LogInterval has passed since the last line.
func logDue(backoff, maxLogged time.Duration, lastLog, now time.Time) bool {
	return backoff > maxLogged || now.Sub(lastLog) >= LogInterval
}

// accepted notes an accept that worked: the first after failures logs
// "accepting connections again", unless the burst logged that less than
// LogInterval ago (a brief recovery, counted for the next line).
func (a *Acceptor) accepted() {
	a.mu.Lock()
	defer a.mu.Unlock()
	b := &a.b
	if !b.down {
		return
	}
	b.down = false
	now := a.now()
	if !b.lastInfo.IsZero() && now.Sub(b.lastInfo) < LogInterval {
		b.flaps++
		return
	}
	b.lastInfo = now
	attrs := []any{"component", "transport", "transport", a.prefix, "listen", a.l.Addr().String(), "failures", b.failures, "for", now.Sub(b.since).Round(time.Millisecond)}
	if b.flaps > 0 {
		attrs = append(attrs, "brief_recoveries", b.flaps)
		b.flaps = 0
	}
	a.logger().Info("accepting connections again", attrs...)
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
