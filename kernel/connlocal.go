package kernel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/internal/netaccept"
	"github.com/airnode/airnode/internal/ratelog"
)

// Connection attempts that fail for a reason of this process or host, not
// of the provider: a consumer out of file
// descriptors failed 55 dials 6 times each, logged only at Debug, while
// its bench blamed the provider.

// localDialCause says why a failed connection attempt failed here, not
// at the provider: reason is a counter label ("fds", "ports", "buffers")
// and what the line an operator reads; both are "" for any other error
// (refused, timed out, no answer to the first ping).
//
// The errno is looked for in err's chain; the error's text too when err
// is a dial's (dialError: a transport, a plugin's say, may flatten the
// errno into its message), never in a first ping's, whose text may be
// the provider's.
func localDialCause(err error) (reason, what string) {
	if err == nil {
		return "", ""
	}
	text := ""
	if errors.As(err, new(dialError)) {
		text = err.Error()
	}
	switch {
	case errors.Is(err, syscall.EMFILE) || strings.Contains(text, "too many open files"):
		return "fds", "this process is out of file descriptors: see ulimit -n"
	case errors.Is(err, syscall.ENFILE) || strings.Contains(text, "file table overflow"):
		return "fds", "the host is out of file descriptors (ENFILE: see fs.file-max)"
	case errors.Is(err, syscall.EADDRNOTAVAIL) || strings.Contains(text, "cannot assign requested address"):
		return "ports", "this host is out of ephemeral ports (EADDRNOTAVAIL: see net.ipv4.ip_local_port_range, and connections in TIME_WAIT)"
	case errors.Is(err, syscall.ENOBUFS) || strings.Contains(text, "no buffer space available"):
		return "buffers", "this host is out of socket buffers (ENOBUFS)"
	}
	return "", ""
}

// dialError is a transport Dial's error as conn.connect returns it:
// the same text and chain, marked as the dial's (localDialCause).
type dialError struct{ err error }

func (e dialError) Error() string { return e.err.Error() }
func (e dialError) Unwrap() error { return e.err }

// Counter labels of a dial that failed at or on the way to the provider
// (dialFailureReason).
const (
	reasonTimeout = "timeout" // no answer: a black-holed path, a vanished host
	reasonRefused = "refused" // ECONNREFUSED: nothing listens on the port
)

// dialFailureReason classifies a failed connection attempt that is not
// local (localDialCause) by its dial's error: reasonTimeout when the dial
// (or its TLS handshake) timed out (a net.Error whose Timeout is true,
// context.DeadlineExceeded: connect.timeout ran out with no answer, the
// signature of a black hole), reasonRefused when the provider's host
// refused it (syscall.ECONNREFUSED), "" for anything else, a first
// ping's error included (a provider that accepted the connection
// answered something). As localDialCause, a dial's text is read too
// ("i/o timeout", "connection refused"): a transport, a plugin's say,
// may flatten the error into its message.
func dialFailureReason(err error) string {
	var d dialError
	if !errors.As(err, &d) {
		return ""
	}
	text := d.Error()
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(text, "connection refused"):
		return reasonRefused
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, context.DeadlineExceeded),
		strings.Contains(text, "i/o timeout"):
		return reasonTimeout
	}
	return ""
}

// providerLimitError is a first ping's error (firstPingError) when the
// provider refused the connection at its connection limit (URL keys
// accepts, accepts.per.ip) and said so in its close-reason event
// (exchange.RefusedReason): the same text and chain, marked so that the
// attempt is counted as reasonProviderLimit, not "other".
type providerLimitError struct{ err error }

func (e providerLimitError) Error() string { return e.err.Error() }
func (e providerLimitError) Unwrap() error { return e.err }

// ErrClosedAtFirstPing is in the chain (errors.Is) of a call's
// CHANNEL_INACTIVE error when the provider closed each new connection
// during its first ping without saying why (not at its connection limit,
// which it names, and no TLS alert): likely a transport mismatch (this
// consumer's transport key is not the provider's), TLS on the provider
// only, or a connection limit of an older provider. airnode health
// retries once over the other bundled transport on it.
var ErrClosedAtFirstPing = errors.New("kernel: the provider closed the connection during the first ping")

// closedAtFirstPingError is a first ping's error (firstPingError) when
// the provider closed the connection without saying why: the same text
// and chain, and ErrClosedAtFirstPing.
type closedAtFirstPingError struct{ err error }

func (e closedAtFirstPingError) Error() string   { return e.err.Error() }
func (e closedAtFirstPingError) Unwrap() []error { return []error{e.err, ErrClosedAtFirstPing} }

// reasonProviderLimit is the counter label of a connection attempt the
// provider refused at its connection limit (providerLimitError).
const reasonProviderLimit = "provider_limit"

// unansweredPingError is a first ping's error (firstPingError) when the
// ping got no answer: nothing answered it within connect.timeout, or this
// consumer's heartbeat closed the connection while it waited. The same
// text and chain, marked so that the attempt is counted as
// reasonHeartbeat, as a later unanswered ping is a heartbeat verdict,
// not "other".
type unansweredPingError struct{ err error }

func (e unansweredPingError) Error() string { return e.err.Error() }
func (e unansweredPingError) Unwrap() error { return e.err }

// reasonHeartbeat is the counter label of a connection attempt whose
// first ping got no answer (unansweredPingError).
const reasonHeartbeat = "heartbeat"

// countConnectFailure counts one failed connection attempt by reason
// (localDialCause, reasonProviderLimit, reasonHeartbeat, or
// dialFailureReason's reasonTimeout and reasonRefused; "": other) in
// counters.Transport (airnode_consumer_connect_failures_total{reason}).
func countConnectFailure(reason string) {
	switch reason {
	case reasonProviderLimit:
		counters.Transport.ConnectProviderLimit.Inc()
	case "fds":
		counters.Transport.ConnectFDs.Inc()
	case "ports":
		counters.Transport.ConnectPorts.Inc()
	case "buffers":
		counters.Transport.ConnectBuffers.Inc()
	case reasonTimeout:
		counters.Transport.ConnectTimeout.Inc()
	case reasonRefused:
		counters.Transport.ConnectRefused.Inc()
	case reasonHeartbeat:
		counters.Transport.ConnectHeartbeat.Inc()
	default:
		counters.Transport.ConnectOther.Inc()
	}
}

// localFailure is a conn's last failed attempt when it failed for a
// local reason (conn.local): Reference.LocalConnectFailures counts them.
type localFailure struct {
	reason, what string
	err          error
}

// Local connect failures are logged at Warn, bounded per base logger and
// reason with internal/ratelog, as the exchange bounds its lines (kernel/exchange
// ratelog.go, internal/netaccept): the first of a burst, then one each
// time the burst's count doubles up to 1,024, then one every 10 s, each
// after the first with suppressed (left out since the line before) and
// in_burst. A reason quiet for 10 s starts a new burst. 300 connections
// failing 6 times each: 11 lines, not 1,800. The table of limiters per
// base logger is a ratelog.Limiters, as the exchange's is.
var localLimits ratelog.Limiters

// allowLocalLine reports whether a local failure of reason at now is
// logged on base, with the lines left out since the last one and the
// burst's count.
func allowLocalLine(base *slog.Logger, reason string, now time.Time) (ok bool, suppressed, inBurst int64) {
	return localLimits.For(base).Allow(reason, now)
}

// logLocalFailure logs, rate-bounded (allowLocalLine), at Warn, a
// connection attempt that failed for a local reason: "cannot
// connect to provider: this process is out of file descriptors: see
// ulimit -n" with attrs, the open-file limit and, once lines were left
// out, suppressed and in_burst. It reports whether it logged.
func logLocalFailure(lg *slog.Logger, reason, what string, attrs ...any) bool {
	if !lg.Enabled(context.Background(), slog.LevelWarn) {
		return false
	}
	ok, suppressed, n := allowLocalLine(lg, reason, time.Now())
	if !ok {
		return false
	}
	if reason == "fds" {
		if limit, known := netaccept.OpenFileLimit(); known {
			attrs = append(attrs, "open_file_limit", limit)
		}
	}
	lg.Warn("cannot connect to provider: "+what, ratelog.Attrs(attrs, suppressed, n)...)
	return true
}

// LocalConnectFailures returns how many of the reference's connections
// are down because their last attempt failed for a reason of this
// process or host, not of the provider: out of file descriptors (EMFILE,
// ENFILE), of ephemeral ports (EADDRNOTAVAIL) or of socket buffers
// (ENOBUFS); and, when n > 0, what one of them says ("this process is out
// of file descriptors: see ulimit -n: smux: dial tcp ...: socket: too
// many open files"). 0, nil when there is none. airnode bench says so
// instead of suspecting the provider.
func (r *Reference) LocalConnectFailures() (n int, example error) {
	for _, inv := range r.dir.All() {
		ri, ok := remoteOf(inv)
		if !ok {
			continue
		}
		for _, c := range ri.conns {
			if c.ready() {
				continue
			}
			if lf := c.local.Load(); lf != nil {
				n++
				if example == nil {
					example = fmt.Errorf("%s: %w", lf.what, lf.err)
				}
			}
		}
	}
	return n, example
}

// minEntryRedialGap bounds the redials a provider's new registry entries
// ask for (conn.redialForEntry): at most one per address per second, so
// that a flapping registry entry cannot make a dial storm.
const minEntryRedialGap = time.Second

// redialForEntry is called when a new registry entry (a provider URL
// added or replaced, a new timestamp) names the conn's address: a conn
// whose channel is down (waiting out its backoff, up to 30 s after a long
// outage) resets its backoff and redials at once, the provider having
// most likely just restarted; at most once per
// minEntryRedialGap. It reports whether it asked. A conn that is up, or
// still at its first attempt, is left alone.
func (c *conn) redialForEntry() bool {
	st := c.state.Load()
	if st == nil || st.ch != nil || c.ctx.Err() != nil {
		return false
	}
	now := time.Now().UnixNano()
	last := c.lastEntryKick.Load()
	if now-last < int64(minEntryRedialGap) || !c.lastEntryKick.CompareAndSwap(last, now) {
		return false
	}
	c.resetBackoff.Store(true)
	if !c.redialing.CompareAndSwap(false, true) {
		return true // a redial is pending or in progress already; the backoff starts afresh after it
	}
	c.byEntry.Store(true) // before the kick: run reads it after the attempt
	select {
	case c.kick <- struct{}{}:
	default: // a kick is pending already
		c.redialing.Store(false)
	}
	return true
}

// entryArrived is called when the directory builds the invoker for a
// new registry entry (Refer's invoker factory): each of its connections
// that was already open for the address and is down redials at once
// (conn.redialForEntry), if the entry is new to it (conn.newEntry): not
// when another reference of the node lists the same entry.
func (r *remoteInvoker) entryArrived() {
	for _, c := range r.conns {
		if c.newEntry(r.url) && c.redialForEntry() {
			c.logger.Debug("new registry entry for a provider that is down; redialing at once", "provider", c.addr)
		}
	}
}
