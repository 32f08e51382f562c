package kernel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/internal/tlsconf"
	"github.com/airnode/airnode/kernel/directory"
	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/spi"
)

// Connection-manager defaults and bounds (URL keys connect.timeout,
// reconnect.backoff and connections).
const (
	// DefaultConnectTimeout bounds one dial plus its first ping ("connect.timeout").
	DefaultConnectTimeout = 3 * time.Second
	// DefaultReconnectBackoff is the first redial delay ("reconnect.backoff");
	// it doubles after every failed attempt up to MaxReconnectBackoff.
	DefaultReconnectBackoff = 100 * time.Millisecond
	// MaxReconnectBackoff caps the redial delay.
	MaxReconnectBackoff = 30 * time.Second
	// MaxConnections is the largest "connections" (the connections a
	// reference opens to each provider, default 1); the least is 1.
	MaxConnections = 64
)

// channel is what the connection manager needs of an exchange channel
// (*exchange.Channel in production, a fake in tests).
type channel interface {
	// InvokeFrom is exchange.Channel's: Invoke with the caller's clock
	// reading (spi.Mono) as the call's start.
	InvokeFrom(ctx context.Context, codec spi.Codec, inv *spi.Invocation, timeout, began time.Duration) spi.Result
	Ping(ctx context.Context) error
	Close(reason string)
	// CloseLogged is Close for an owner that logs the close itself: the
	// channel's own line for it stays at Debug.
	CloseLogged(reason string)
	Done() <-chan struct{}
	Wait()
}

// dialFunc opens a consumer channel to addr, giving up when ctx ends.
type dialFunc func(ctx context.Context, addr string) (channel, error)

// connState is one published state of a conn: a ready channel, or the
// error that explains why there is none.
type connState struct {
	ch  channel
	err error // *spi.Error with StatusChannelInactive when ch is nil
}

// conn is one managed consumer connection to a provider address: it owns
// the channel independently of any heartbeat timer.
// It dials in the background as soon as it starts; when the channel dies for
// any reason it redials with backoff (doubling from reconnect.backoff to 30 s,
// ±20 % jitter) without waiting for user traffic, until close; a call that
// finds no provider available cuts the wait short (redialNow), so a provider
// restarted during a long backoff is back for that call (scenario H3). A
// channel is published only after the provider answered a ping on it,
// because a hung process's kernel still accepts TCP connections.
type conn struct {
	addr           string
	dial           dialFunc
	connectTimeout time.Duration
	backoff        time.Duration
	logger         *slog.Logger
	warns          *connectWarns // bounds the first connection's failure lines per reference; nil: none

	state   atomic.Pointer[connState] // nil until the first attempt ends
	changed *signal                   // broadcast on every published state; may be nil

	kick      chan struct{} // cap 1: redial now instead of at the end of the backoff
	redialing atomic.Bool   // a redial asked for by redialNow is pending or in progress
	lastKick  atomic.Int64  // Unix ns of the last redial redialNow asked for, or of the last failed attempt's end
	// verdictUntil is the Unix ns until which calls ask for no redial
	// (redialNow): the last attempt ended in a TLS verdict on a
	// certificate, which no redial changes before someone replaces a
	// certificate, so the backoff alone paces the dials
	verdictUntil atomic.Int64

	lastEntryKick atomic.Int64                 // Unix ns of the last redial a new registry entry asked for (redialForEntry)
	resetBackoff  atomic.Bool                  // redialForEntry: the next failure waits reconnect.backoff again
	byEntry       atomic.Bool                  // the pending redial was asked for by a new registry entry
	local         atomic.Pointer[localFailure] // the last attempt failed for a local reason (connlocal.go); nil otherwise

	seenMu sync.Mutex
	seen   map[string]struct{} // the registry entries the conn was built for (newEntry); guarded by seenMu

	ctx    context.Context // cancelled by close: aborts a dial in progress
	cancel context.CancelFunc
	once   sync.Once
	done   chan struct{} // closed when run has returned

	graceful atomic.Bool   // closeAfterCalls: let the calls in flight finish first
	hard     chan struct{} // closed by close: stop waiting for them
	hardOnce sync.Once
	why      atomic.Pointer[string] // closeBecause's reason for the channel's close; nil: "consumer released the provider"

	transport, heartbeat string                    // extension names, for phase ("" in tests)
	tls                  bool                      // the channel runs TLS (tls=true), for firstPingError's hint
	oneShot              bool                      // a one-shot consumer's (WithOneShot): run logs closes and failed redials at Debug
	phase                atomic.Pointer[string]    // the extension call run is waiting on, for Shutdown's error; nil: none
	failed               atomic.Pointer[error]     // closing its last channel: the session Close or heartbeat stop that failed (awaitChannel)
	current              atomic.Pointer[connState] // the last channel connected, until run returns (pendingCalls)

	upMu   sync.Mutex
	upNext int
	onUp   map[int]func() // whenUp's, by id; guarded by upMu

	line *connLine // its key in the node's pool, which outlives it (connLine); nil outside a pool

	// answered: a channel of this conn (its address and transport) came
	// up, its first ping answered: a first ping unanswered later is a
	// stopped or hung provider, not a mismatch (firstPingError)
	answered atomic.Bool
}

// whenUp calls f on run's goroutine each time a channel comes up (a
// first connection or a reconnection), after the state is published, so
// that ready is true when f runs, until the returned cancel is called:
// the remote invokers using the conn hear of the event that makes their
// provider usable again (remoteInvoker.connUp). f must not block.
func (c *conn) whenUp(f func()) (cancel func()) {
	c.upMu.Lock()
	defer c.upMu.Unlock()
	if c.onUp == nil {
		c.onUp = map[int]func(){}
	}
	id := c.upNext
	c.upNext++
	c.onUp[id] = f
	return func() {
		c.upMu.Lock()
		delete(c.onUp, id)
		c.upMu.Unlock()
	}
}

// wentUp calls the functions whenUp was given (not under upMu: one may
// cancel itself).
func (c *conn) wentUp() {
	c.upMu.Lock()
	fs := make([]func(), 0, len(c.onUp))
	for _, f := range c.onUp {
		fs = append(fs, f)
	}
	c.upMu.Unlock()
	for _, f := range fs {
		f()
	}
}

// newConn returns a started conn to addr. changed, when not nil, is
// broadcast every time the conn's state changes.
func newConn(addr string, dial dialFunc, connectTimeout, backoff time.Duration, logger *slog.Logger, changed *signal) *conn {
	return newNamedConn(addr, "", "", false, false, dial, connectTimeout, backoff, logger, nil, changed, nil)
}

// newNamedConn is newConn for a conn whose transport and heartbeat
// strategy are the extensions named: a Shutdown that gives up waiting for
// the conn names the one it was waiting on (conn.phase). tls says whether
// the channel runs TLS (the URL's tls=true): a connection the provider
// closes at once gets a hint for the side that does not. oneShot: the
// node is a one-shot consumer (WithOneShot), whose channel closes and
// failed redials run logs at Debug. warns, when not nil, bounds the
// Warn lines of a first connection that keeps failing (the reference's
// that made the conn). line is the conn's key in its pool
// (connPool.acquire's), nil outside one.
func newNamedConn(addr, transport, heartbeat string, tls, oneShot bool, dial dialFunc, connectTimeout, backoff time.Duration, logger *slog.Logger, warns *connectWarns, changed *signal, line *connLine) *conn {
	c := &conn{
		addr: addr, dial: dial, connectTimeout: connectTimeout, backoff: backoff, logger: logger, warns: warns,
		changed: changed, done: make(chan struct{}), kick: make(chan struct{}, 1), hard: make(chan struct{}),
		transport: transport, heartbeat: heartbeat, tls: tls, oneShot: oneShot, line: line,
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	go c.run()
	return c
}

// maxSeenEntries bounds conn.seen: past it the set starts afresh, and an
// entry forgotten that way costs at most one early redial.
const maxSeenEntries = 1024

// newEntry records the registry entry u (a provider URL naming the conn's
// address) and reports whether the conn had not seen it before. An entry
// is its service key with its timestamp, which a restarted provider's new
// entry changes; without a timestamp it is the whole URL.
// The conn is shared by every reference of the node to the address, so a
// new reference listing an entry another one listed already is no news:
// it must not reset the backoff to a provider that is down (a consumer
// re-referring every 500 ms made 64 redials of a killed provider in
// 15.6 s instead of 8); only a new entry does (redialForEntry).
func (c *conn) newEntry(u spi.URL) bool {
	id := u.String()
	if ts, _ := u.Param("timestamp"); ts != "" { // the provider's: MergeURL keeps it
		id = u.ServiceKey() + "|" + ts
	}
	c.seenMu.Lock()
	defer c.seenMu.Unlock()
	if _, ok := c.seen[id]; ok {
		return false
	}
	if c.seen == nil || len(c.seen) >= maxSeenEntries {
		c.seen = make(map[string]struct{})
	}
	c.seen[id] = struct{}{}
	return true
}

// get returns the ready channel. It never blocks: with no ready channel
// (first connect still in progress, reconnecting, closed) it fails fast
// with CHANNEL_INACTIVE naming the address and the reason, a status
// failover retries elsewhere. Waiting for a first connection is the
// reference's business (Reference.awaitProvider), bounded by the call's
// timeout.
func (c *conn) get() (channel, error) {
	st := c.state.Load()
	if st == nil {
		return nil, &spi.Error{Status: spi.StatusChannelInactive,
			Message: fmt.Sprintf("provider %s: not connected yet (first connection attempt in progress, connect.timeout %v)", c.addr, c.connectTimeout)}
	}
	if st.ch != nil {
		return st.ch, nil
	}
	return nil, st.err
}

// ready reports whether a channel is up and answered its first ping: only
// then may calls be routed here (Available).
func (c *conn) ready() bool {
	st := c.state.Load()
	if st == nil || st.ch == nil {
		return false
	}
	select {
	case <-st.ch.Done():
		// dead, and the manager has not published it down yet: a liveness
		// check that closed it tells the invokers at once (WhenCheckEnds),
		// which must not find the provider connected
		return false
	default:
	}
	// A provider that announced its shutdown (Dubbo's read-only event)
	// still answers calls in flight but takes no new ones.
	if ro, ok := st.ch.(interface{ ReadOnly() bool }); ok && ro.ReadOnly() {
		return false
	}
	return true
}

// connecting reports whether the first connection attempt, or a redial
// asked for by redialNow, is in progress.
func (c *conn) connecting() bool { return c.state.Load() == nil || c.redialing.Load() }

// minRedialGap is how soon after the last redial a call asked for it may
// ask for another (redialNow): callers of a provider that stays down cost
// one extra dial per minRedialGap, not one per call.
const minRedialGap = 500 * time.Millisecond

// redialNow asks the manager to redial at once when the conn is down
// (its channel died and it is waiting out its backoff), no call asked
// for one in the last minRedialGap and the last attempt did not end in a
// verdict on a certificate (verdictUntil: then the backoff alone paces
// the dials). It reports whether it asked; the conn is then connecting
// until that attempt ends.
func (c *conn) redialNow() bool {
	st := c.state.Load()
	if st == nil || st.ch != nil || c.ctx.Err() != nil || time.Now().UnixNano() < c.verdictUntil.Load() ||
		time.Since(time.Unix(0, c.lastKick.Load())) < minRedialGap || !c.redialing.CompareAndSwap(false, true) {
		return false
	}
	// redialing is set before the kick: the manager clears it after the
	// attempt, never before
	select {
	case c.kick <- struct{}{}:
		c.lastKick.Store(time.Now().UnixNano())
		return true
	default: // a kick is pending already
		c.redialing.Store(false)
		return false
	}
}

func (c *conn) publish(st *connState) {
	c.state.Store(st)
	if c.changed != nil {
		c.changed.broadcast()
	}
}

// down returns a state without channel. The cause chain keeps the
// connection error but never a context error: the connect deadline is the
// conn's own, and a cluster must not take it for the caller's (failover
// does not retry errors wrapping context.DeadlineExceeded).
func (c *conn) down(format string, args ...any) *connState {
	err := fmt.Errorf(format, args...)
	cause := errors.Unwrap(err)
	if errors.Is(cause, context.DeadlineExceeded) || errors.Is(cause, context.Canceled) {
		cause = errors.New(cause.Error())
	}
	return &connState{err: &spi.Error{Status: spi.StatusChannelInactive, Message: err.Error(), Cause: notConnected{cause}}}
}

// notConnected is the Cause of a down connection's error: cause, which
// errors.Is and errors.As still find, and spi.ErrNotConnected.
type notConnected struct{ cause error }

func (e notConnected) Error() string {
	if e.cause == nil {
		return spi.ErrNotConnected.Error()
	}
	return e.cause.Error()
}

func (e notConnected) Unwrap() []error {
	if e.cause == nil {
		return []error{spi.ErrNotConnected}
	}
	return []error{e.cause, spi.ErrNotConnected}
}

// run is the manager loop: connect, wait for the channel to die, redial.
//
// Its log lines: a channel that dies is logged with its reason ("kernel:
// channel closed; reconnecting"), at Warn, or at Info when the provider
// had announced its shutdown (go-away, read-only event), or at Debug for
// a heartbeat verdict, which the channel logs at Warn itself; failed redials
// after a channel died are logged at Warn (Info after a clean close) on
// attempts 1, 2, 4, 8... with the attempt, the error and how long the
// provider has been down, the others at Debug; the reconnect says after
// how many attempts and how long down. First connections that fail are
// logged at Debug (the calls waiting for them fail with the reason) on
// attempts 1 and 2, then at Warn on attempts 4, 8, 16... ("kernel:
// cannot connect to provider" with failing_for=, since the first
// attempt: a listed provider that refuses every connection, such as a
// killed provider's entry until its registry session expires; tester67
// #3; for the first 3 such providers of a reference, the others summed
// up in one line: connectWarns, tester99 #4), so that a short call that fails over says nothing more than its
// error. A one-shot consumer's conn (WithOneShot) logs a channel that
// dies ("channel closed", component=kernel) and the failed redials after it at
// Debug: its calls report the failures, and it reconnects for no one.
// An attempt that failed for a local reason (this process out of file
// descriptors, the host out of ephemeral ports or socket buffers:
// localDialCause), first connection or not, is logged at Warn naming
// it, rate-bounded across the node's conns (logLocalFailure), the lines
// left out at Debug. Every failed attempt is counted by cause
// (airnode_consumer_connect_failures_total{reason}: a local one, the
// provider's limit, a dial that timed out or was refused, other); every
// dial after a channel died in airnode_reconnect_attempts_total, every
// channel that died in airnode_consumer_connections_lost_total, and
// every connection re-made in airnode_reconnects_total. A new registry
// entry for the address (redialForEntry) cuts the backoff short and
// starts it afresh; the reconnect line then says asked_by_registry_entry.
// A conn released (its provider left the directory) with its channel lost
// and not re-made leaves that loss to its pool key (connLine): the next
// conn of the key, made when the provider is listed again (a registry
// session that expired while it was stopped), counts its dials in
// airnode_reconnect_attempts_total and its connection in
// airnode_reconnects_total, as this conn would have had the provider
// stayed listed.
func (c *conn) run() {
	defer close(c.done)
	delay := c.backoff
	everUp := false
	var (
		downSince time.Time // when the last channel died
		clean     bool      // it died after the provider announced its shutdown
	)
	firstTry := time.Now() // of the first connection's attempts
	for attempt := 1; ; attempt++ {
		if everUp || c.line.owed() {
			counters.Heartbeat.ReconnectAttempts.Inc()
		}
		began := time.Now()
		ch, err := c.connect()
		redialed := c.redialing.Load()
		byEntry := c.byEntry.Swap(false)
		if err != nil {
			c.redialing.Store(false) // before the state: a waiting call then sees the attempt over
			if c.ctx.Err() != nil {
				c.publish(c.down("connection to provider %s closed", c.addr))
				c.leftLost(everUp)
				return
			}
			reason, what := localDialCause(err)
			switch {
			case reason != "":
				countConnectFailure(reason)
			case errors.As(err, new(providerLimitError)):
				countConnectFailure(reasonProviderLimit)
			case errors.As(err, new(unansweredPingError)):
				countConnectFailure(reasonHeartbeat)
			default:
				countConnectFailure(dialFailureReason(err)) // timeout, refused, or other
			}
			if reason != "" {
				c.local.Store(&localFailure{reason: reason, what: what, err: err})
			} else {
				c.local.Store(nil)
			}
			// An attempt that waited (a black hole: connect.timeout for a
			// dial or a first ping that never came) most likely waits
			// again: a call's redialNow waits minRedialGap after it, so
			// a call right after Reference.WaitReady saw it fail gets its
			// error at once instead of a second wait (without this,
			// airnode call took 2 × connect.timeout). One that failed at
			// once (refused, out of descriptors) may succeed at once:
			// a call still asks for a redial (a restarted provider).
			if time.Since(began) >= min(minRedialGap, c.connectTimeout/2) {
				c.lastKick.Store(time.Now().UnixNano())
			}
			// The calls failing with this error count their own attempts
			// (failover: "failed after 1 attempt"), not the connection's:
			// say that the connection has its own. Their count is the log
			// record's only (attempt= below, and at the reconnect, at
			// Debug for the first attempts: a one-shot consumer such as
			// airnode call, which logs at Warn, shows none, so the text
			// points to no log: nu83 #4). The text is one per cause for
			// the whole outage, so that errors grouped by text (bench's
			// summary, dashboards) show it once: it carried the running
			// count, one text per attempt (fix-aj #4).
			c.publish(c.down("cannot connect to provider %s (redialed with backoff): %w", c.addr, err))
			level := slog.LevelDebug
			if everUp && attempt&(attempt-1) == 0 && !c.oneShot { // a power of two: 1, 2, 4, 8...
				level = slog.LevelWarn
				if clean {
					level = slog.LevelInfo
				}
			}
			msg := "connect failed"
			attrs := []any{"provider", c.addr, "attempt", attempt, "asked_by_a_call", redialed && !byEntry, "err", err, "retry_in", delay}
			if !everUp && attempt >= 4 && attempt&(attempt-1) == 0 { // 4, 8, 16...
				level, msg = slog.LevelWarn, "cannot connect to provider"
				attrs = append(attrs, "failing_for", time.Since(firstTry).Round(time.Millisecond))
				if reason == "" && !c.warns.allow(c.addr) {
					level = slog.LevelDebug // the reference's summary counts it (connectWarns)
				}
			}
			if everUp {
				msg = "cannot reconnect to provider"
				attrs = append(attrs, "down_for", time.Since(downSince).Round(time.Millisecond))
			}
			// a local cause (out of file descriptors, ports, buffers) is
			// this process's, not the provider's: Warn, rate-bounded
			// across the node's conns (connlocal.go)
			switch {
			case reason == "":
				c.logger.Log(context.Background(), level, msg, attrs...)
			case !logLocalFailure(c.logger, reason, what, attrs...):
				c.logger.Debug(msg, attrs...) // left out at Warn: over the rate
			}
			wait := jitter(delay)
			if tlsconf.Explain(err) != "" {
				// a certificate verdict (this consumer's on the provider's
				// certificate, or the provider's alert on this one's):
				// calls redialing every minRedialGap would only repeat it
				// (a consumer calling every 100 ms made two handshakes a
				// second, forever); a new registry entry for the address
				// still redials at once (redialForEntry)
				c.verdictUntil.Store(time.Now().Add(wait).UnixNano())
			} else {
				c.verdictUntil.Store(0)
			}
			if !c.sleep(wait) {
				c.publish(c.down("connection to provider %s closed", c.addr))
				c.leftLost(everUp)
				return
			}
			delay = min(delay*2, MaxReconnectBackoff)
			if c.resetBackoff.Swap(false) { // a new registry entry for the address (redialForEntry)
				delay = c.backoff
			}
			continue
		}
		c.local.Store(nil)
		c.resetBackoff.Store(false)
		if everUp {
			counters.Heartbeat.Reconnects.Inc() // a connection re-made: one, however many attempts it took
			c.logger.Info("reconnected to provider", "provider", c.addr, "attempts", attempt, "asked_by_a_call", redialed && !byEntry,
				"asked_by_registry_entry", byEntry, "down_for", time.Since(downSince).Round(time.Millisecond))
		} else if c.line.remade() {
			// the successor of a conn released with its channel lost
			// (connLine): this re-makes that connection
			counters.Heartbeat.Reconnects.Inc()
			c.logger.Info("reconnected to provider", "provider", c.addr, "attempts", attempt, "asked_by_a_call", redialed && !byEntry,
				"asked_by_registry_entry", byEntry, "note", "its registry entry left and was listed again while the connection was down")
		} else if attempt > 1 {
			c.logger.Info("connected to provider", "provider", c.addr, "attempts", attempt, "asked_by_a_call", redialed && !byEntry,
				"asked_by_registry_entry", byEntry)
		}
		everUp = true
		c.answered.Store(true)
		attempt, delay = 0, c.backoff
		up := &connState{ch: ch}
		c.current.Store(up)
		c.publish(up)
		c.redialing.Store(false) // after the state: a waiting call never sees neither
		c.wentUp()               // the invokers using it: an ejected provider's "back in use" now, not at the next call
		select {
		case <-ch.Done():
			counters.Heartbeat.ConnectionsLost.Inc() // whatever closed it: the provider, a heartbeat verdict, the liveness check
			c.publish(c.down("provider %s: channel closed, reconnecting", c.addr))
			c.setPhase("%s stop (the channel to %s closed)", named("heartbeat", c.heartbeat), c.addr)
			if err := c.awaitChannel(ch); err != nil {
				c.failed.Store(&err) // the conn's close reports it (a provider's shutdown closed this one)
			}
			c.phase.Store(nil)
			downSince = time.Now()
			reason := "unknown"
			if r, ok := ch.(interface{ Reason() string }); ok && r.Reason() != "" {
				reason = r.Reason()
			}
			attrs := []any{"provider", c.addr, "reason", reason}
			if f, ok := ch.(interface{ FailedCalls() int }); ok {
				attrs = append(attrs, "failed_calls", f.FailedCalls()) // pending calls the close failed CHANNEL_INACTIVE
			}
			ro, ok := ch.(interface{ ReadOnly() bool })
			clean = ok && ro.ReadOnly()
			switch {
			case c.oneShot:
				// a one-shot consumer (WithOneShot): the call the close
				// failed says so itself, and the program exits next
				c.logger.Debug("channel closed", append(attrs, "one_shot", true)...)
			case clean:
				c.logger.Info("channel closed; reconnecting", append(attrs, "provider_shutting_down", true)...)
			case c.heartbeat == "none" && strings.HasPrefix(reason, "closed by peer (the provider's reason: heartbeat idle: "):
				// The same close, the provider saying why (its close-reason
				// event, which also ended the idleness idle_for measures).
				c.logger.Info("channel closed; reconnecting", append(attrs,
					"note", "the provider closed an idle connection: this consumer runs heartbeat=none, which sends nothing while idle")...)
			case c.heartbeat == "none" && reason == "closed by peer" && idleFor(ch) >= time.Second:
				// An idle provider closes a connection with nothing read or
				// written for its heartbeat.timeout, and none sends nothing
				// on an idle one: expected, not a fault. (A provider that
				// predates the close-reason event says nothing.)
				c.logger.Info("channel closed; reconnecting", append(attrs,
					"note", "the provider closed an idle connection: this consumer runs heartbeat=none, which sends nothing while idle, and an idle provider closes a connection silent for its heartbeat.timeout (200s by default)",
					"idle_for", idleFor(ch).Round(time.Millisecond))...)
			default:
				// a lost provider connection, whatever closed it (EOF, a
				// heartbeat verdict, a liveness check, a protocol error):
				// this is its one record; the channel logs none of its own
				// (exchange.Options.OwnerLogsClose)
				c.logger.Warn("channel closed; reconnecting", attrs...)
			}
			if !c.sleep(jitter(c.backoff)) {
				c.publish(c.down("connection to provider %s closed", c.addr))
				c.leftLost(true)
				return
			}
		case <-c.ctx.Done():
			c.publish(c.down("connection to provider %s closed", c.addr))
			if c.graceful.Load() {
				c.awaitCalls(ch)
			}
			reason := "consumer released the provider"
			if why := c.why.Load(); why != nil {
				reason = *why
			}
			select {
			case <-ch.Done():
				// it died while its calls were awaited, before this
				// consumer closed it (a liveness check on a stopped
				// provider whose registry entry left first): lost,
				// unless the provider announced its shutdown
				if ro, ok := ch.(interface{ ReadOnly() bool }); !ok || !ro.ReadOnly() {
					counters.Heartbeat.ConnectionsLost.Inc()
					c.leftLost(true)
				}
				if r, ok := ch.(interface{ Reason() string }); ok && r.Reason() != "" {
					reason = r.Reason()
				}
			default:
			}
			c.setPhase("%s session Close (closing the channel to %s)", named("transport", c.transport), c.addr)
			ch.Close(reason)
			c.logReleased(ch, reason)
			c.setPhase("%s stop (closing the channel to %s)", named("heartbeat", c.heartbeat), c.addr)
			if err := c.awaitChannel(ch); err != nil {
				c.failed.Store(&err)
			}
			c.phase.Store(nil)
			return
		}
	}
}

// logReleased logs the close of a channel this consumer released (the
// channel logs none of its own: exchange.Options.OwnerLogsClose): at
// Debug, at Info when the close failed calls still pending.
func (c *conn) logReleased(ch channel, reason string) {
	level, attrs := slog.LevelDebug, []any{"provider", c.addr, "reason", reason}
	if f, ok := ch.(interface{ FailedCalls() int }); ok {
		if n := f.FailedCalls(); n > 0 {
			level = slog.LevelInfo
			attrs = append(attrs, "failed_calls", n)
		}
	}
	c.logger.Log(context.Background(), level, "channel closed", attrs...)
}

// connect dials and waits for the provider to answer a ping, both within
// connect.timeout; a dial (or TLS handshake) cut short by it says so,
// naming the key and its value.
func (c *conn) connect() (channel, error) {
	ctx, cancel := context.WithTimeout(c.ctx, c.connectTimeout)
	defer cancel()
	c.setPhase("%s Dial to %s", named("transport", c.transport), c.addr)
	ch, err := c.dial(context.WithValue(ctx, dialingConnKey{}, c), c.addr)
	c.phase.Store(nil)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && c.ctx.Err() == nil {
			// "i/o timeout", "context deadline exceeded": name the key that bounds it
			err = fmt.Errorf("%w (connect.timeout %v bounds the dial and the TLS handshake: raise it on a lossy or slow path)", err, c.connectTimeout)
		}
		return nil, dialError{err} // localDialCause reads its text; a first ping's is the provider's
	}
	start := time.Now()
	if err := ch.Ping(ctx); err != nil {
		c.setPhase("%s session Close (the channel to %s failed its first ping)", named("transport", c.transport), c.addr)
		// logged by run, bounded to attempts 1, 2, 4, 8...: the exchange's
		// own line for it (the ping failed as a call) stays at Debug
		const noAnswer = "no answer to the connection's first ping"
		ch.CloseLogged(noAnswer)
		c.setPhase("%s stop (the channel to %s failed its first ping)", named("heartbeat", c.heartbeat), c.addr)
		ch.Wait()
		c.phase.Store(nil)
		reason := ""
		if r, ok := ch.(interface{ Reason() string }); ok {
			reason = r.Reason()
		}
		return nil, firstPingError(err, reason, c.transport, time.Since(start), c.connectTimeout, c.tls, c.answered.Load())
	}
	return ch, nil
}

// idleFor returns how long ch had read and written nothing, or 0 when it
// cannot tell.
func idleFor(ch channel) time.Duration {
	rw, ok := ch.(interface {
		LastRead() time.Time
		LastWrite() time.Time
	})
	if !ok {
		return 0
	}
	last := rw.LastRead()
	if w := rw.LastWrite(); w.After(last) {
		last = w
	}
	if last.IsZero() {
		return 0
	}
	return time.Since(last)
}

// firstPingError says why the first ping on a new connection failed: the
// provider closed the connection (at its connection limit, URL key
// accepts, it closes a connection at once after accept; or a transport or
// TLS mismatch: it could not read our frames), it did not answer in time
// (a hung process), or it answered with an error. A ping that got no
// answer (in time, or before this consumer's heartbeat closed the
// connection) is an unansweredPingError: counted as reasonHeartbeat.
//
// reason is the channel's close reason (exchange.Channel.Reason): a close
// that came from the consumer itself (its heartbeat gave up on a provider
// that is paused, say) is reported as such, not as a likely mismatch.
// transport is this consumer's transport extension ("" when unknown),
// named in the mismatch hint. tlsOn says whether this consumer ran TLS:
// one that did not is told that a provider serving TLS closes a
// clear-text connection so. answered says a connection to this address
// with this transport answered its first ping before: an unanswered one
// now is a stopped or hung provider (kill -STOP, a debugger, a stuck
// process), said first, not a likely configuration mismatch.
func firstPingError(err error, reason, transport string, took, connectTimeout time.Duration, tlsOn, answered bool) error {
	// "open stream: ...": a multiplexed session (smux) already dead when
	// the channel opened its stream, the provider having closed the
	// connection at once (at its connection limit, accepts)
	peer := reason == "" || strings.HasPrefix(reason, "closed by peer") || strings.HasPrefix(reason, "read: ") || strings.HasPrefix(reason, "write: ") ||
		strings.HasPrefix(reason, "open stream: ")
	switch spi.StatusOf(err) {
	case spi.StatusChannelInactive:
		if why := tlsconf.Explain(err); why != "" {
			// under TLS 1.3 the provider's verdict on this consumer's
			// certificate arrives only now, as an alert: it is the cause
			return fmt.Errorf("connected, but %s (during the first ping, after %v): %w", why, took.Round(time.Millisecond/10), err)
		}
		if !peer {
			if strings.HasPrefix(reason, "heartbeat") {
				// its heartbeat's verdict on the unanswered ping: a
				// connection attempt that failed, never a connection
				// the heartbeat ended (tester84 #9)
				return unansweredPingError{fmt.Errorf("connected, but nothing answered the first ping: this consumer's heartbeat gave up on it after %v (%s); the connection was never up: a failed connection attempt, redialed with backoff",
					took.Round(time.Millisecond/10), reason)}
			}
			return fmt.Errorf("connected, but this consumer closed the connection during the first ping, after %v: %s", took.Round(time.Millisecond/10), reason)
		}
		if _, why, ok := strings.Cut(reason, "(the provider's reason: "+exchange.RefusedReason); ok {
			// the provider said why (its connection limit): no guess
			why = strings.TrimSuffix(why, ")")
			return providerLimitError{spi.Errorf(spi.StatusChannelInactive, "connected, but %s%s (during the first ping, after %v; its log says \"connection refused\")",
				exchange.RefusedReason, why, took.Round(time.Millisecond/10))}
		}
		// What happened, then the likely reasons with their fixes, the
		// likeliest first: forty of these at once (a reconnect storm)
		// must read at a glance; the channel's own error last.
		tr := "a transport mismatch (the consumer's transport key must match the provider's)"
		if transport != "" {
			tr = fmt.Sprintf("a transport mismatch (this consumer's transport=%s: set the provider's, airnode call, bench, health: -p transport=NAME; its log names the bytes it could not read)", transport)
		}
		tlsWhy := "a TLS mismatch (the tls keys must match the provider's)"
		if !tlsOn {
			tlsWhy = "TLS on the provider (it closes a clear-text connection at once; a provider serving TLS publishes tls=true in its registry URL: " +
				"set tls=true and tls.ca=FILE, the CA that signed its certificate, airnode call, bench, health: -p tls=true -p tls.ca=FILE)"
		}
		mismatch := tr + ", " + tlsWhy
		return closedAtFirstPingError{fmt.Errorf("connected, but the provider closed the connection during the first ping, after %v; likely %s, "+
			"or its connection limit (URL keys accepts, accepts.per.ip; its log says \"connection refused\"): %w",
			took.Round(time.Millisecond/10), mismatch, err)}
	case spi.StatusServerTimeout, spi.StatusClientTimeout:
		// The ping's own error ("SERVER_TIMEOUT: exchange: ping ADDR: no
		// answer: context deadline exceeded") says again what the text
		// says: left out of it (nu83 #4: an 800-character line).
		if answered {
			tr := ""
			if transport != "" {
				tr = " with transport " + transport
			}
			return unansweredPingError{fmt.Errorf("connected, but the provider is stopped or hung (it answered before: this consumer was connected to it at this address%s): nothing answered the first ping within %v (connect.timeout); "+
				"or cannot accept connections (out of file descriptors: its log says \"accept failed\"), or a lossy or slow path: raise connect.timeout", tr, connectTimeout)}
		}
		return unansweredPingError{fmt.Errorf("connected, but nothing answered the first ping within %v (connect.timeout); is an airnode provider listening there, with the same transport and tls keys? "+
			"Or it is hung, or cannot accept connections (out of file descriptors: its log says \"accept failed\"), or a lossy or slow path: raise connect.timeout", connectTimeout)}
	default:
		return fmt.Errorf("connected but the provider answered the first ping with an error: %w", err)
	}
}

// sleep waits d, or until a call asks for a redial (redialNow), or until
// close; it reports whether to go on.
func (c *conn) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.kick:
		return true
	case <-c.ctx.Done():
		return false
	}
}

// releaseGrace bounds how long a released connection waits for its calls
// in flight (closeAfterCalls); each call's own timeout ends it sooner.
const releaseGrace = 30 * time.Second

// awaitCalls waits until ch has no call waiting for a response, ch dies,
// close is called, or releaseGrace passes.
func (c *conn) awaitCalls(ch channel) {
	p, ok := ch.(interface{ Pending() int })
	if !ok {
		return
	}
	deadline := time.Now().Add(releaseGrace)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for p.Pending() > 0 && time.Now().Before(deadline) {
		select {
		case <-tick.C:
		case <-ch.Done():
			return
		case <-c.hard:
			return
		}
	}
}

// close stops reconnecting, closes the channel and waits for the manager
// goroutine and the channel's goroutines. Idempotent; it also ends a
// closeAfterCalls' wait.
func (c *conn) close() {
	c.hardOnce.Do(func() { close(c.hard) })
	c.once.Do(c.cancel)
	<-c.done
}

// closeBecause is close, the calls still in flight failing with reason
// (CHANNEL_INACTIVE "channel to ADDR closed: REASON") unless the channel
// already closed.
func (c *conn) closeBecause(reason string) {
	c.stopBecause(reason)
	<-c.done
}

// stopBecause is closeBecause without the wait.
func (c *conn) stopBecause(reason string) {
	c.why.CompareAndSwap(nil, &reason)
	c.hardOnce.Do(func() { close(c.hard) })
	c.once.Do(c.cancel)
}

// dialingConnKey keys, in the ctx connect passes to its dial, the conn dialing:
// the dial names the calls making the channel waits on (waiting).
type dialingConnKey struct{}

// waiting is exchange.Options.Waiting for a channel the conn in ctx, if
// any, makes: it names the call (`transport "x" session Open (the
// connection to ADDR)`, `heartbeat "x" Watch (...)`) in the conn's phase,
// so that a Shutdown giving up on it names that call, not the Dial.
// nil without a conn in ctx.
func waiting(ctx context.Context) func(call string) {
	c, _ := ctx.Value(dialingConnKey{}).(*conn)
	if c == nil {
		return nil
	}
	return func(call string) {
		switch {
		case call == "":
			c.phase.Store(nil)
		case strings.HasPrefix(call, "session "):
			c.setPhase("%s %s (the connection to %s)", named("transport", c.transport), call, c.addr)
		default:
			c.setPhase("%s (the connection to %s)", call, c.addr)
		}
	}
}

// awaitChannel waits for ch, just closed or dead, to finish (Wait). A
// channel whose session Close failed (a transport that panicked, or
// returned an error, maybe leaving the connection open and the channel's
// readers blocked) is waited for closeGiveUp at most, then given up:
// its goroutines are left running. It returns the failure
// of the session Close or of the heartbeat's stop (a recovered panic is
// an *extension.PanicError), logged at Warn, or nil.
func (c *conn) awaitChannel(ch channel) error {
	x, ok := ch.(interface {
		Finished() <-chan struct{}
		CloseFailed() <-chan struct{}
		CloseErr() error
		StopErr() error
		ClosedNetConn() bool
	})
	if !ok {
		ch.Wait()
		return nil
	}
	finished := true
	select {
	case <-x.Finished():
	case <-x.CloseFailed():
		t := time.NewTimer(closeGiveUp)
		select {
		case <-x.Finished():
		case <-t.C:
			finished = false
		}
		t.Stop()
	}
	var errs []error
	if cerr := x.CloseErr(); cerr != nil {
		what := "the connection closed all the same"
		switch {
		case finished:
		case x.ClosedNetConn():
			what = "the connection was given up; its net.Conn was closed"
		default:
			what = "the connection was given up and left open (its session gives no NetConn to close)"
		}
		errs = append(errs, fmt.Errorf("%s session Close (the connection to %s) failed: %w; %s", named("transport", c.transport), c.addr, cerr, what))
	}
	if serr := x.StopErr(); serr != nil {
		errs = append(errs, fmt.Errorf("%s stop (the connection to %s) failed: %w", named("heartbeat", c.heartbeat), c.addr, serr))
	}
	err := errors.Join(errs...)
	if err != nil {
		c.logger.Warn(err.Error(), "provider", c.addr)
	}
	return err
}

// closeGiveUp is how long a conn waits for a channel whose session Close
// failed to finish, before giving it up.
const closeGiveUp = 100 * time.Millisecond

// setPhase records the extension call run is about to wait on.
func (c *conn) setPhase(format string, args ...any) {
	p := fmt.Sprintf(format, args...)
	c.phase.Store(&p)
}

// named says `transport "tcp"`, or kind alone when name is "".
func named(kind, name string) string {
	if name == "" {
		return kind
	}
	return fmt.Sprintf("%s %q", kind, name)
}

// closeAfterCalls is close for a provider that left the directory (it
// unregistered to shut down, or its entry expired): no call picks the conn
// any more, but the calls in flight on it get their answers before the
// channel closes, as Dubbo's client close waits for its pending futures
// (HeaderExchangeClient.close(timeout)). A provider shutting down drains
// those calls; closing at once failed them with CHANNEL_INACTIVE.
func (c *conn) closeAfterCalls() {
	c.graceful.Store(true)
	c.once.Do(c.cancel)
	<-c.done
}

// jitter spreads d by ±20 % so that consumers of a restarted provider do
// not redial in lockstep.
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return d*4/5 + rand.N(d*2/5+1)
}

// signal is a broadcast: wait returns a channel closed by the next
// broadcast. The zero value is ready to use.
type signal struct {
	mu sync.Mutex
	ch chan struct{}

	epoch directory.Epoch // bumped by every broadcast: the directories' available lists (directory.Watched)
}

// wait returns a channel closed at the next broadcast. Take it before
// checking the condition waited for, then select on it.
func (s *signal) wait() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

// broadcast wakes every waiter.
func (s *signal) broadcast() {
	s.epoch.Bump()
	s.mu.Lock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
	s.mu.Unlock()
}

// connPool shares managed connections between the remote invokers of one
// node: one session per provider address and connection settings (slot i of
// "connections=N"), reference-counted, closed when the last invoker using it
// closes (Dubbo's shared connections).
type connPool struct {
	mu      sync.Mutex
	conns   map[string]*pooled
	leaving map[*conn]struct{}  // released, closing once their calls are done
	lost    map[string]struct{} // keys whose released conn lost its channel, not re-made yet (connLine)

	releasing sync.WaitGroup // the goroutines closing released conns
	failures  []error        // on mu: session Closes and heartbeat stops that failed closing released conns (takeFailures)

	// changed is broadcast whenever a conn of the pool changes state
	// (connected, failed, closed): references waiting for a first
	// provider listen to it.
	changed signal

	// warnOnce is the node's per-peer warnings (exchange.Options.WarnOnce),
	// shared by its consumer and provider channels.
	warnOnce exchange.WarnOnce

	// oneShot: the node is a one-shot consumer (WithOneShot); set before
	// any conn is made, read by newRemoteInvoker.
	oneShot bool
}

// connLine is a conn's key in its pool, which outlives the conn: a conn
// released with its channel lost and not re-made (its provider left the
// directory while down, a registry session that expired while the
// provider was stopped) leaves the loss there (leftLost), and the next
// conn of the key, made when the provider is listed again, re-makes it
// (remade): the connection is counted lost once and re-made once
// whether or not the provider's entry left meanwhile. The methods are
// safe for concurrent use and do nothing on a nil line (a conn outside
// a pool).
type connLine struct {
	pool *connPool
	key  string
}

// owed reports whether a released conn of the key lost its channel and
// no conn has re-made it yet.
func (l *connLine) owed() bool {
	if l == nil {
		return false
	}
	l.pool.mu.Lock()
	defer l.pool.mu.Unlock()
	_, ok := l.pool.lost[l.key]
	return ok
}

// remade takes the key's loss, if any, for a conn whose channel has just
// come up, and reports whether there was one.
func (l *connLine) remade() bool {
	if l == nil {
		return false
	}
	l.pool.mu.Lock()
	defer l.pool.mu.Unlock()
	_, ok := l.pool.lost[l.key]
	delete(l.pool.lost, l.key)
	return ok
}

// leftLost records that c, released, lost its channel and did not re-make
// it, when everUp (a conn never up lost nothing of its own). When the
// key's current conn is up already, that conn re-made it: counted now.
func (c *conn) leftLost(everUp bool) {
	l := c.line
	if l == nil || !everUp {
		return
	}
	l.pool.mu.Lock()
	defer l.pool.mu.Unlock()
	if e := l.pool.conns[l.key]; e != nil && e.c != c && e.c.ready() {
		counters.Heartbeat.Reconnects.Inc()
		return
	}
	if l.pool.lost == nil || len(l.pool.lost) >= maxSeenEntries {
		l.pool.lost = map[string]struct{}{}
	}
	l.pool.lost[l.key] = struct{}{}
}

type pooled struct {
	c    *conn
	refs int
}

// acquire returns the conn for key, creating it with mk when absent; mk
// gets the key's connLine.
func (p *connPool) acquire(key string, mk func(line *connLine) *conn) *conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		p.conns = map[string]*pooled{}
	}
	e := p.conns[key]
	if e == nil {
		e = &pooled{c: mk(&connLine{pool: p, key: key})}
		p.conns[key] = e
	}
	e.refs++
	return e.c
}

// release drops one reference to key's conn and, at zero, closes it once
// its calls in flight are done (conn.closeAfterCalls), in the background.
func (p *connPool) release(key string) {
	p.mu.Lock()
	e := p.conns[key]
	if e == nil {
		p.mu.Unlock()
		return
	}
	e.refs--
	if e.refs > 0 {
		p.mu.Unlock()
		return
	}
	delete(p.conns, key)
	if p.leaving == nil {
		p.leaving = map[*conn]struct{}{}
	}
	p.leaving[e.c] = struct{}{}
	// Added under mu: closeAllBecause, which takes mu before its Wait, then
	// finds the counter up (an Add racing a Wait at zero is a data race).
	p.releasing.Add(1)
	p.mu.Unlock()
	// Its calls in flight finish first (closeAfterCalls), in a goroutine of
	// the pool's: the caller (a registry notification) does not wait.
	go func() {
		defer p.releasing.Done()
		e.c.closeAfterCalls()
		p.mu.Lock()
		delete(p.leaving, e.c)
		if f := e.c.failed.Load(); f != nil {
			p.failures = append(p.failures, *f)
		}
		p.mu.Unlock()
	}()
}

// drain waits until every released conn has closed after its calls in
// flight (closeAfterCalls), or ctx ends; it returns how many calls were
// still in flight on them then, and on how many conns (0, 0: none). A
// conn waiting on an extension call (conn.phase: a Dial, a session's
// Close, a heartbeat's stop) is past its calls: drain does not wait for
// it (Shutdown's closeAllWithin does, and names the call). A conn open
// with no call in flight is not counted (so Shutdown says calls were
// not answered only when there were some).
func (p *connPool) drain(ctx context.Context) (calls, conns int) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		p.mu.Lock()
		n := 0
		calls, conns = 0, 0
		for c := range p.leaving {
			if c.phase.Load() == nil {
				n++
				if k := c.pendingCalls(); k > 0 {
					calls += k
					conns++
				}
			}
		}
		p.mu.Unlock()
		if n == 0 {
			return 0, 0
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return calls, conns
		}
	}
}

// pendingCalls returns the calls in flight on the conn's channel (its
// requests waiting for their responses), 0 without one.
func (c *conn) pendingCalls() int {
	st := c.current.Load()
	if st == nil {
		return 0
	}
	if p, ok := st.ch.(interface{ Pending() int }); ok {
		return p.Pending()
	}
	return 0
}

// takeFailures returns, and forgets, the failures of the session Closes
// and heartbeat stops of the released conns that have closed: Shutdown
// returns them.
func (p *connPool) takeFailures() []error {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.failures
	p.failures = nil
	return f
}

// closeAll closes every conn still held (invokers leaked by a caller), ends
// the waits of released ones and waits for them.
func (p *connPool) closeAll() { p.closeAllBecause("consumer released the provider") }

// closeAllBecause is closeAll, the calls still in flight on the conns
// failing with reason.
func (p *connPool) closeAllBecause(reason string) {
	p.mu.Lock()
	all := p.conns
	p.conns = nil
	leaving := make([]*conn, 0, len(p.leaving))
	for c := range p.leaving {
		leaving = append(leaving, c)
	}
	p.mu.Unlock()
	// Every conn is told first, then waited for: one whose transport or
	// heartbeat blocks its close does not keep the others open.
	for _, c := range leaving {
		c.stopBecause(reason)
	}
	for _, e := range all {
		e.c.stopBecause(reason)
	}
	p.releasing.Wait()
	for _, e := range all {
		<-e.c.done
	}
}
