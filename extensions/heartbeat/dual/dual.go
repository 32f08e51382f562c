package dual

import (
	"context"
	"fmt"
	"time"

	"github.com/airnode/airnode/extensions/heartbeat/internal/acks"
	"github.com/airnode/airnode/extensions/heartbeat/internal/hbparams"
	"github.com/airnode/airnode/extensions/heartbeat/internal/task"
	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/spi"
)

// Name is the extension name, selected by heartbeat=dual.
const Name = "dual"

// Builder builds dual heartbeats. The zero value is ready to use.
type Builder struct{}

// Name returns "dual".
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

// Heartbeat watches channels with the dual strategy. Safe for concurrent
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
// heartbeat.interval, as this strategy's own pings do (and at most
// max(1 s, the call's timeout)).
func (h *Heartbeat) TimeoutCheck() (maxWait time.Duration, on bool) {
	return h.cfg.Interval, !h.cfg.NoPingOnTimeout
}

// Watch starts the heartbeat and reconnect tasks for ch, on either side.
// It returns stop, which is idempotent and waits for both timers, every
// ping in flight and the channel closer.
func (h *Heartbeat) Watch(ch spi.Channel) (stop func()) {
	now := time.Now()
	w := &watch{cfg: h.cfg, ch: ch, start: now, awaiting: now, acks: acks.New(ch)}
	w.heartbeat = task.New(w.heartbeatCheck)
	w.reconnect = task.New(w.reconnectCheck)
	w.heartbeat.Start(h.cfg.Interval / 3)
	if ch.Side() == spi.Provider { // look for the consumer's settings early
		w.reconnect.Start(min(h.cfg.Timeout/3, hbparams.HelloWait))
	} else {
		w.reconnect.Start(h.cfg.Timeout / 3)
	}
	return func() {
		w.heartbeat.Stop()
		w.reconnect.Stop()
	}
}

type watch struct {
	cfg       Config
	ch        spi.Channel
	start     time.Time
	heartbeat *task.Task
	reconnect *task.Task

	// Only heartbeatCheck uses these (checks never overlap); see unanswered.
	awaiting time.Time // when the write awaiting its answer was made: the watch's last ping, or the watch start; zero: none
	answered time.Time // LastRead when that write was first seen answered: the peer had read it by then

	acks *acks.Watch // reconnectCheck's only
}

// since returns how long ago t was, counting a zero t (nothing yet) from
// the start of the watch.
func (w *watch) since(now, t time.Time) time.Duration {
	if t.Before(w.start) {
		t = w.start
	}
	return now.Sub(t)
}

// heartbeatCheck is Dubbo 2.7.0's HeartbeatTimerTask: ping when read-idle
// or write-idle for more than the interval — but never while a ping is
// unanswered, where Dubbo pings again at every tick (see unanswered).
func (w *watch) heartbeatCheck(_ context.Context, now time.Time) (time.Duration, func(context.Context)) {
	tick := w.cfg.Interval / 3
	lastRead, lastWrite := w.ch.LastRead(), w.ch.LastWrite()
	if !w.awaiting.IsZero() && lastRead.After(w.awaiting) {
		w.answered, w.awaiting = lastRead, time.Time{}
	}
	// The peer read our writes up to the answered one by the time its
	// answer came: for write-idleness that counts as a write then, or a
	// ping answered late (by a peer resuming from a pause) would be
	// followed at once by another, the first one having been written long
	// before.
	if w.answered.After(lastWrite) {
		lastWrite = w.answered
	}
	interval := hbparams.PingInterval(w.ch, w.cfg.Interval) // a provider's minimum
	if w.since(now, lastRead) <= interval && w.since(now, lastWrite) <= interval {
		return tick, nil
	}
	if w.unanswered(lastWrite) {
		return tick, nil
	}
	w.awaiting = now
	return tick, func(ctx context.Context) {
		pctx, cancel := context.WithTimeout(ctx, w.cfg.Interval)
		defer cancel()
		counters.Heartbeat.PingsSent.Inc()
		err := w.ch.Ping(pctx) // the verdict is the reconnect task's, from LastRead
		switch {
		case err == nil:
			counters.Heartbeat.PingsAnswered.Inc()
		case ctx.Err() == nil: // not cut short by the watch stopping
			counters.Heartbeat.PingsFailed.Inc()
		}
	}
}

// unanswered reports whether a write is still waiting for the peer's
// answer (nothing read since it): the watch's last ping or, on a consumer
// before the watch pinged, what was written since the watch started (the
// kernel's first ping of a new connection, which carries the hello). A
// provider's writes before its first ping are answers, which the consumer
// does not answer: a provider's watch starts on a goroutine of its own,
// so it can start after reading the consumer's first ping and before
// answering it, and waiting for an answer to that answer it never pinged
// and closed a live idle consumer at its timeout.
// Another ping then tells nothing more — the connection delivers the
// first, and the reconnect task judges the silence from LastRead alone —
// and a peer that was only paused (SIGSTOP, a long GC pause, a VM freeze)
// would read every ping queued meanwhile at once when it resumes, which
// the provider's ping-flood guard (exchange Options.MinPingInterval) takes
// for a flood: a warning, and past its strikes a closed channel. Dubbo
// 2.7.0's HeartbeatTimerTask pings at every tick (interval/3) while the
// peer is silent; this watch keeps at most one ping unanswered per
// channel, and counts the answer to a late one as a write (heartbeatCheck).
// Pings answered in time go on as in Dubbo: each after the interval idle.
func (w *watch) unanswered(lastWrite time.Time) bool {
	switch {
	case w.awaiting.IsZero():
		return false
	case w.awaiting.Equal(w.start): // no ping yet: is there a write to wait for?
		return w.ch.Side() == spi.Consumer && lastWrite.After(w.start)
	}
	return true
}

// reconnectCheck is Dubbo 2.7.0's ReconnectTimerTask (consumer) and its
// server-side close: act when nothing was read for more than the timeout.
// On the provider the timeout is its own heartbeat.timeout, or the
// consumer's negotiated bound (hbparams.PeerCloseTimeout) once its settings
// arrived when that is shorter: the provider pings on its own interval, so
// a live consumer's answers keep its own timeout from firing, and a
// consumer pinging more often keeps the shorter one from firing. The peer
// acknowledging more of a backlog written to it (a large frame on a slow
// link, which our pings and the peer's answers queue behind) counts as a
// read (acks); while a backlog waits the check runs every acks.Gap.
func (w *watch) reconnectCheck(_ context.Context, now time.Time) (time.Duration, func(context.Context)) {
	timeout, negotiated, pinged := w.cfg.Timeout, false, w.cfg.Interval
	if w.ch.Side() == spi.Provider {
		// Its own timeout holds (it pings on its own interval, which a live
		// consumer answers); the consumer's bound only shortens it.
		if peer, ok := hbparams.PeerTimeout(w.ch, w.cfg.Timeout); ok && peer < timeout {
			timeout, negotiated = peer, true
		}
	} else {
		// pinging at the provider's minimum: the silence stretches with it
		pinged = hbparams.PingInterval(w.ch, w.cfg.Interval)
		timeout = hbparams.Stretch(timeout, w.cfg.Interval, pinged)
	}
	late := w.reconnect.Late()
	alive, backlog := w.acks.Look(now, late)
	lastRead := w.ch.LastRead()
	if alive.After(lastRead) {
		lastRead = alive
	}
	silence := w.since(now, lastRead)
	if silence <= timeout {
		if backlog {
			return min(timeout/3, acks.Gap(timeout)), nil
		}
		return timeout / 3, nil
	}
	if w.reconnect.Defer(late, timeout, w.ch, Name, "check ran") {
		// this process did not run: its reader has not read what the
		// peer sent meanwhile; judge once it has
		return task.Grace, nil
	}
	action := "closing"
	if w.ch.Side() == spi.Consumer {
		action = "reconnecting"
	}
	rule := fmt.Sprintf("heartbeat.timeout %v", timeout)
	if pinged != w.cfg.Interval {
		rule = fmt.Sprintf("%sheartbeat.timeout %v stretched to %v", hbparams.StretchNote(w.cfg.Interval, pinged), w.cfg.Timeout, timeout)
	}
	if negotiated {
		rule = fmt.Sprintf("%v from the consumer's heartbeat settings, under this provider's heartbeat.timeout %v", timeout, w.cfg.Timeout)
	}
	note := ""
	if backlog {
		note = ", nor more of what was written to it acknowledged"
	}
	w.reconnect.CloseChannel(w.ch, fmt.Sprintf("heartbeat dual: nothing read from %s for %v%s (%s), %s",
		w.ch.RemoteAddr(), silence.Round(time.Millisecond), note, rule, action))
	return -1, nil
}

var (
	_ spi.HeartbeatBuilder = Builder{}
	_ spi.Heartbeat        = (*Heartbeat)(nil)
	_ spi.TimeoutCheck     = (*Heartbeat)(nil)
)
