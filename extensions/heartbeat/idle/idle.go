package idle

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/airnode/airnode/extensions/heartbeat/internal/acks"
	"github.com/airnode/airnode/extensions/heartbeat/internal/hbparams"
	"github.com/airnode/airnode/extensions/heartbeat/internal/task"
	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/spi"
)

// Name is the extension name, selected by heartbeat=idle (the default).
const Name = "idle"

// Builder builds idle heartbeats. The zero value is ready to use.
type Builder struct{}

// Name returns "idle".
func (Builder) Name() string { return Name }

// Build validates the heartbeat keys of u (see the package comment) and
// returns a Heartbeat. It does no I/O and starts no goroutine.
func (Builder) Build(u spi.URL) (spi.Heartbeat, error) {
	c, err := ParseConfig(u)
	if err != nil {
		return nil, err
	}
	return New(c), nil
}

// Heartbeat watches channels with the idle strategy. Safe for concurrent
// use; one Heartbeat may watch any number of channels.
type Heartbeat struct{ cfg Config }

// New returns a Heartbeat with cfg, which must come from ParseConfig or
// satisfy its bounds.
func New(cfg Config) *Heartbeat { return &Heartbeat{cfg: cfg} }

// Config returns the settings in use.
func (h *Heartbeat) Config() Config { return h.cfg }

// TimeoutCheck implements spi.TimeoutCheck: with heartbeat.ping.on.timeout
// (default true) the consumer's exchange pings at once when a call times
// out with nothing read since it was sent, that ping waiting at most
// heartbeat.ping.timeout (and at most max(1 s, the call's timeout)).
func (h *Heartbeat) TimeoutCheck() (maxWait time.Duration, on bool) {
	return h.cfg.PingTimeout, !h.cfg.NoPingOnTimeout
}

// Watch starts watching ch: on the consumer side the read-idle ping with
// failure counting, on the provider side the all-idle close. It returns
// stop, which is idempotent and waits for the watch's timer, its ping and
// its channel closer.
func (h *Heartbeat) Watch(ch spi.Channel) (stop func()) {
	start := time.Now()
	if ch.Side() == spi.Provider {
		w := &providerWatch{cfg: h.cfg, ch: ch, start: start, acks: acks.New(ch)}
		w.task = task.New(w.check)
		w.task.Start(min(h.cfg.Timeout, hbparams.HelloWait))
		return w.task.Stop
	}
	w := &consumerWatch{cfg: h.cfg, ch: ch, start: start, seenRead: latest(ch.LastRead(), start), acks: acks.New(ch)}
	w.task = task.New(w.check)
	w.task.Start(h.cfg.Interval)
	return w.task.Stop
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// soon returns d, or at most gap while a backlog waits unacknowledged, so
// the next check looks at the peer's acknowledgements in time (acks.Gap).
func soon(d time.Duration, backlog bool, gap time.Duration) time.Duration {
	if backlog {
		return min(d, gap)
	}
	return d
}

// consumerWatch is the consumer side. Its fields are used by check only,
// and checks never overlap, so they need no lock.
type consumerWatch struct {
	cfg      Config
	ch       spi.Channel
	start    time.Time
	task     *task.Task
	seenRead time.Time // LastRead (or the peer's acknowledgements, acks) when failures was last updated
	failures int
	acks     *acks.Watch
}

// lastHeard returns the latest of LastRead, the watch's start and alive,
// when the peer was last seen taking in a backlog (acks.Watch.Look).
func (w *consumerWatch) lastHeard(alive time.Time) time.Time {
	return latest(latest(w.ch.LastRead(), w.start), alive)
}

func (w *consumerWatch) check(ctx context.Context, now time.Time) (time.Duration, func(context.Context)) {
	select {
	case <-w.ch.Done():
		return -1, nil
	default:
	}
	alive, backlog := w.acks.Look(now, w.task.Late())
	lastRead := w.lastHeard(alive)
	if lastRead.After(w.seenRead) { // any byte read, or more of our backlog acknowledged: the peer is alive
		w.failures, w.seenRead = 0, lastRead
	}
	interval := hbparams.PingInterval(w.ch, w.cfg.Interval)
	gap := acks.Gap(interval)
	if idle := now.Sub(lastRead); idle < interval {
		return soon(interval-idle, backlog, gap), nil
	}
	pctx, cancel := context.WithTimeout(ctx, w.cfg.PingTimeout)
	counters.Heartbeat.PingsSent.Inc()
	pinged := time.Now()
	err := w.ch.Ping(pctx)
	cancel()
	// how much later than its deadline a failed ping's wait ended: this
	// process did not run (the answer may be waiting in the socket)
	over := time.Duration(0)
	if err != nil {
		over = max(0, time.Since(pinged)-w.cfg.PingTimeout)
	}
	if ctx.Err() != nil {
		return -1, nil // stopped
	}
	select {
	case <-w.ch.Done():
		return -1, nil // closed while pinging: nothing left to judge
	default:
	}
	if err == nil {
		counters.Heartbeat.PingsAnswered.Inc()
	} else {
		counters.Heartbeat.PingsFailed.Inc()
	}
	// A ping that failed while the peer acknowledged more of our backlog
	// waited behind that backlog (a large request on a slow link): no
	// failure.
	alive, _ = w.acks.Look(time.Now(), over)
	progressed := err != nil && alive.After(w.seenRead)
	lastRead = w.lastHeard(alive)
	switch {
	case err == nil || lastRead.After(w.seenRead):
		w.failures, w.seenRead = 0, lastRead
	case w.task.Defer(over, w.cfg.PingTimeout, w.ch, Name, "ping's wait ended"):
		// no failure: judge again once the reader has read what
		// arrived while this process did not run (the answer, late)
		return task.Grace, nil
	default:
		w.failures++
		if w.failures >= w.cfg.Retries {
			w.task.CloseChannel(w.ch, fmt.Sprintf(
				"heartbeat idle: %d pings to %s failed in a row (%sheartbeat.retries %d, heartbeat.ping.timeout %v), last: %v",
				w.failures, w.ch.RemoteAddr(), hbparams.StretchNote(w.cfg.Interval, interval), w.cfg.Retries, w.cfg.PingTimeout, err))
			return -1, nil
		}
	}
	// The next ping is due one interval after this one started; after one
	// forgiven for the peer's acknowledgements, not before the next look
	// (a gap later) can see them again, as the look after the ping stamps
	// the peer alive when the ping started.
	next := max(0, interval-time.Since(now))
	if progressed {
		next = max(next, gap)
	}
	return next, nil
}

// providerWatch is the provider side: all-idle close, never a ping.
type providerWatch struct {
	cfg   Config
	ch    spi.Channel
	start time.Time
	task  *task.Task
	acks  *acks.Watch // used by check only
}

// check closes the channel after timeout of silence: the consumer's
// negotiated bound (hbparams.PeerCloseTimeout) once its settings arrived,
// else heartbeat.timeout. The consumer acknowledging more of a backlog
// written to it (a large response on a slow link) is no silence (acks).
func (w *providerWatch) check(_ context.Context, now time.Time) (time.Duration, func(context.Context)) {
	timeout, negotiated := hbparams.PeerTimeout(w.ch, w.cfg.Timeout)
	late := w.task.Late()
	alive, backlog := w.acks.Look(now, late)
	last := latest(latest(latest(w.ch.LastRead(), w.ch.LastWrite()), w.start), alive)
	idle := now.Sub(last)
	if idle < timeout {
		return soon(timeout-idle, backlog, acks.Gap(timeout)), nil
	}
	if w.task.Defer(late, timeout, w.ch, Name, "check ran") {
		// this process did not run: its reader has not read what the
		// consumer sent meanwhile; judge once it has
		return task.Grace, nil
	}
	rule := fmt.Sprintf("heartbeat.timeout %v", timeout)
	if negotiated {
		rule = fmt.Sprintf("%v from the consumer's heartbeat settings", timeout)
		if timeout == hbparams.PeerTimeoutCap(w.cfg.Timeout) {
			rule = fmt.Sprintf("%v, the most this provider allows a consumer's heartbeat settings: the larger of %d × its heartbeat.timeout %v and %v", timeout, hbparams.PeerCapFactor, w.cfg.Timeout, hbparams.PeerCapFloor)
		}
	}
	note := ""
	if backlog {
		note = ", nor did it acknowledge more of what was written to it"
	}
	reason := fmt.Sprintf("heartbeat idle: nothing read from or written to %s for %v%s (%s)",
		w.ch.RemoteAddr(), idle.Round(time.Millisecond), note, rule)
	if hbparams.PeerStrategy(w.ch) == "none" {
		// A none consumer sends nothing on an idle channel by design: the
		// close frees a connection nobody uses, and the consumer redials
		// (on its own at once). Expected, so logged at Info. Nor does it
		// send anything during a long call: a call still running is
		// answered with this reason before the close (CloseExpected).
		w.task.CloseChannelExpected(w.ch, reason+": the consumer runs heartbeat=none, which sends nothing on an idle connection, nor while a call runs (heartbeat=idle pings then); it redials")
		return -1, nil
	}
	if !negotiated {
		// No hello: the bound is this provider's own heartbeat.timeout,
		// which only a consumer that pings at this provider's interval
		// keeps off. Say so: the reason also goes to the consumer (the
		// exchange's close-reason event), which may be a hand-written
		// client that never heard of heartbeats.
		advice := fmt.Sprintf("a consumer that sends no heartbeat hello must ping at least every %v (this provider's heartbeat.interval) while idle or during a long call, or send a hello and ping by it (docs/wire.md, Heartbeats; Go consumers do so with heartbeat=idle, the default)", w.cfg.Interval)
		if p, ok := w.ch.(spi.PingCounter); ok && p.PingsRead() == 0 {
			// It never pinged: it runs no heartbeat, and the close is
			// the documented consequence, not a fault (Info).
			w.task.CloseChannelExpected(w.ch, reason+": the consumer sent no ping and no hello on this connection: "+advice)
			return -1, nil
		}
		if hello, ok := peerHello(w.ch); ok {
			reason += fmt.Sprintf(": the consumer's heartbeat hello %q has a strategy or values this provider cannot use (so its own heartbeat.timeout holds), and it stopped pinging: %s", hello, advice)
		} else {
			reason += ": the consumer sent no hello and stopped pinging (hung, or it pings less often than that; or, where this provider logged \"stopped reading from\" this consumer, its hello and pings are among what was not read): " + advice
		}
	}
	w.task.CloseChannel(w.ch, reason)
	return -1, nil
}

// peerHello returns the consumer's heartbeat hello on ch, as it sent it
// (at most 200 bytes of it), if one arrived.
func peerHello(ch spi.Channel) (string, bool) {
	p, ok := ch.(spi.PeerHeartbeat)
	if !ok {
		return "", false
	}
	u, ok := p.PeerHeartbeat()
	if !ok {
		return "", false
	}
	h := u.String()
	if i := strings.IndexByte(h, '?'); i >= 0 {
		h = h[i+1:] // the settings, not the placeholder address
	}
	if len(h) > 200 {
		h = h[:200] + "..."
	}
	return h, true
}

var (
	_ spi.HeartbeatBuilder = Builder{}
	_ spi.Heartbeat        = (*Heartbeat)(nil)
	_ spi.TimeoutCheck     = (*Heartbeat)(nil)
)
