package exchange

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// minCheckWait is the shortest a liveness check's ping waits, and the
// shortest gap between two checks of a channel, whatever the call's
// timeout: a call with a 10 ms timeout is no reason to give a provider
// 10 ms to answer.
const minCheckWait = time.Second

// livenessCheck is a consumer channel's check after silent timeouts
// (checkAfterTimeout): at most one ping outstanding, at most one started
// per gap.
type livenessCheck struct {
	quiet    atomic.Pointer[time.Timer] // the quiet watch's timer (watchQuiet); nil: no watch
	idle     atomic.Bool                // the quiet watch is stopped, no call pending at its last look; the next call added wakes it (wakeQuiet)
	looks    atomic.Int64               // the quiet watch's looks so far (checkQuiet), for tests
	since    atomic.Int64               // UnixNano from which calls have been pending at every look: the wake (wakeQuiet) or the first look in a row that found calls pending; 0: none at the last look
	running  atomic.Bool                // a check's ping is outstanding
	last     atomic.Int64               // mono() when the last check started; 0: none yet
	timeouts atomic.Int64               // silent timeouts since the last check was answered
	sent     atomic.Int64               // time.Now().UnixNano() when the running check's current ping was sent
	due      atomic.Int64               // and when, UnixNano, it stops waiting for the answer
	started  atomic.Int64               // time.Now().UnixNano() when the running check started (began); 0: none running

	mu    sync.Mutex // guards ended, and running's fall to false (end)
	ended []func()   // WhenCheckEnds' callbacks for the running check
}

// endCheck marks the running check over, tells Options.OnCheck, and runs
// the callbacks WhenCheckEnds registered for it, outside mu, in the order
// registered.
func (c *Channel) endCheck() {
	l := &c.check
	l.mu.Lock()
	l.started.Store(0)
	l.running.Store(false)
	fs := l.ended
	l.ended = nil
	l.mu.Unlock()
	if c.opts.OnCheck != nil {
		c.opts.OnCheck()
	}
	for _, f := range fs {
		f()
	}
}

// beginCheck notes that a check, whose running the caller just set,
// starts now (CheckRunning) and tells Options.OnCheck.
func (c *Channel) beginCheck() {
	c.check.started.Store(time.Now().UnixNano())
	if c.opts.OnCheck != nil {
		c.opts.OnCheck()
	}
}

// CheckRunning returns when this consumer channel's liveness check (the
// ping after calls timed out, or waited, with nothing read:
// checkAfterTimeout, checkQuiet) started, and true, while its ping is
// unanswered; false when no check runs. The kernel leaves the provider
// out of its picks meanwhile, where another can take the calls.
// Options.OnCheck is called after each change. Safe for concurrent use;
// one atomic load.
func (c *Channel) CheckRunning() (since time.Time, running bool) {
	if n := c.check.started.Load(); n != 0 {
		return time.Unix(0, n), true
	}
	return time.Time{}, false
}

// WhenCheckEnds registers f to run once when this consumer channel's
// liveness check (the ping after silent call timeouts, checkAfterTimeout)
// that is waiting for its ping's answer now ends: answered (a slow peer,
// the channel stays), or the channel closed (by the check, whose wait
// passed with nothing read, or for any other reason; Done is closed
// before f runs). It returns when the check's current ping was sent and
// when it stops waiting for the answer (the check may ping again while
// the peer acknowledges a backlog: runCheck), and pending true; when no
// check is waiting it returns pending false and f is not registered.
// f runs on the check's goroutine, which Close waits for: it must not
// block nor call Close or Wait. Safe for concurrent use; never blocks.
// The kernel keeps an ejected provider out of use while its ping is
// unanswered with it.
func (c *Channel) WhenCheckEnds(f func()) (sent, due time.Time, pending bool) {
	l := &c.check
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.running.Load() {
		return time.Time{}, time.Time{}, false
	}
	l.ended = append(l.ended, f)
	return time.Unix(0, l.sent.Load()), time.Unix(0, l.due.Load()), true
}

// checkAfterTimeout runs after a consumer call failed SERVER_TIMEOUT: its
// request was handed to the transport elapsed ago and timeout was its
// deadline. When nothing at all has been read from the channel since the
// call began (no byte: a large frame still arriving counts, read.go) — the strongest sign of a dead peer a busy channel gives, as
// a read-idle heartbeat does not fire on a channel that keeps sending —
// and Options.Heartbeat implements spi.TimeoutCheck with the check on, it
// sends one ping at once, in a goroutine of the channel's, waiting
// max(minCheckWait, timeout) bounded by the strategy's maxWait. No answer
// in that time (and still nothing read) closes the channel: every pending
// call fails CHANNEL_INACTIVE and the kernel's connection manager redials,
// as after a heartbeat's verdict. An answer means a slow provider, not a
// dead one: the channel stays. One check at a time; a new one starts at
// most once per max(minCheckWait, timeout).
//
// The idea is HTTP/2 clients' (Go's x/net/http2 Transport: a PING after
// ReadIdleTimeout, the connection closed after PingTimeout without its
// answer; Chrome's ping of a connection it has read nothing from lately),
// applied when a call times out rather than on a timer, and Finagle's
// failure accrual (consecutive failures mark an endpoint dead), with a
// ping as the witness so that a slow provider is not taken for a dead one.
func (c *Channel) checkAfterTimeout(elapsed, timeout time.Duration) {
	if c.opts.Side != spi.Consumer {
		return
	}
	tc, ok := c.opts.Heartbeat.(spi.TimeoutCheck)
	if !ok {
		return
	}
	began := time.Now().Add(-elapsed).UnixNano()
	if c.lastRead.Load() >= began {
		return // the peer sent something since: not silent
	}
	maxWait, on := tc.TimeoutCheck()
	if !on {
		return
	}
	c.check.timeouts.Add(1)
	wait := max(minCheckWait, timeout)
	gap := int64(wait)
	if maxWait > 0 {
		wait = min(wait, maxWait)
	}
	now := mono()
	if last := c.check.last.Load(); last != 0 && now-last < gap {
		return
	}
	if !c.check.running.CompareAndSwap(false, true) {
		return
	}
	c.check.last.Store(now)
	c.check.noteSent(time.Now(), wait)
	c.beginCheck()
	if !c.goIO(func() { c.runCheck(wait, 0) }) {
		c.endCheck() // dying: nothing to check
	}
}

// runCheck sends the liveness check's ping and closes the channel when it
// gets no answer within wait and nothing else was read meanwhile — no
// byte, counting those of a large frame still arriving (read.go) — nor,
// when the ping was sent behind backlogFrom or more unacknowledged bytes
// (a large request still crossing the link, in the socket's queue or
// the writer's), did the peer acknowledge more of them (spi.AckCounter):
// a peer taking in a 4 MiB request over a 10 Mbit/s link is busy, not
// dead, while a black-holed path acknowledges nothing, nor a
// hung peer once its receive window is full, so either is closed by the
// next check at the latest; nor did this side's own large write go on
// (writer.bulkAt: a chunk of a batch or frame over 64 KiB taken by the
// socket since the ping was sent). On a single-stream session the ping
// queues in the writer behind such a write, and where the peer takes the
// bytes as fast as they come (loopback, a fast link) while this process
// writes slowly (a 70 MiB request under -race, a starved CPU) nothing
// waits unacknowledged in the socket: the writer's progress is then the
// only sign that the silence is this side's doing. The two complement
// each other: on a slow link the writer's progress comes in steps (the
// kernel wakes a blocked write only after about a third of the send
// buffer drained, 1.1 MB, 9 s at 1 Mbit/s) and the acknowledgements show
// the link moving between them. Netty's IdleStateHandler counts write
// progress as activity the same way (observeOutput); gRPC sends its
// keepalive pings ahead of queued data, which the writer here does not
// (a ping frame joins the next batch), so it is the wait that gives way.
// A hung peer's kernel takes a write only until its receive window and
// this side's send buffer are full (a few MiB): then the write stops,
// and the next wait closes the channel. Small writes (calls sent to a
// hung peer) stamp nothing: they are no sign of the peer's life.
//
// A check the peer's acknowledgements kept does not end there: it pings
// again, wait after wait, for as long as the backlog keeps being
// acknowledged and nothing is read, and closes the channel once a wait
// passes with neither. No later call need time out for that: on tcp a
// call queued behind the stalled backlog is never sent, and fails
// CLIENT_TIMEOUT, which starts no check (under load a check that began
// while the socket buffers still took bytes in was the last one, and a
// black-holed path stayed open past 15 s).
//
// quiet > 0 marks a check the quiet watch started (calls pending with
// nothing read for quiet, checkQuiet), which its reason says.
func (c *Channel) runCheck(wait, quiet time.Duration) {
	defer c.endCheck()
	var sent time.Time
	var acked, unacked uint64
	var counts, behind, graced bool
	for busy := true; busy; {
		sent = time.Now()
		c.check.noteSent(sent, wait)
		acked, unacked, counts = c.acked()
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		counters.Heartbeat.PingsSent.Inc()
		err := c.Ping(ctx)
		cancel()
		if err == nil {
			counters.Heartbeat.PingsAnswered.Inc()
			c.check.timeouts.Store(0)
			return
		}
		select {
		case <-c.dying:
			return // closed meanwhile: nothing left to judge
		default:
		}
		counters.Heartbeat.PingsFailed.Inc()
		if st := spi.StatusOf(err); st != spi.StatusServerTimeout && st != spi.StatusClientTimeout {
			return // answered with an error: the peer is there
		}
		if over := time.Since(sent) - wait; !graced && over > max(min(stallLateLimit, wait/4), time.Millisecond) {
			// The wait ended well after its deadline: this process did
			// not run (GC pause, SIGSTOP, starved CPU), and the answer
			// may be waiting in the socket, its reader not run yet.
			// Judge once the reader has caught up, once per check.
			graced = true
			c.logLimited(slog.LevelInfo, "liveness late", fmt.Sprintf("liveness check's ping to %s: its wait ended %v late (this process did not run): judging after the reader catches up",
				c.remote, over.Round(time.Millisecond)), "late", over.Round(time.Millisecond))
			select {
			case <-c.dying:
				return
			case <-time.After(stallGrace):
			}
		}
		if c.lastRead.Load() >= sent.UnixNano() {
			return // something arrived meanwhile (a late response, bytes of a large one): not dead
		}
		behind = counts && unacked >= backlogFrom
		// this side's large write went on meanwhile: the ping may wait
		// behind it, in the writer (ping again)
		busy = c.w.bulkAt.Load() >= sent.UnixNano()
		if !busy && behind {
			if now, _, ok := c.acked(); ok && now > acked {
				busy = true // the peer took in more of the backlog the ping queued behind: busy, not dead (yet)
			}
		}
	}
	n := c.check.timeouts.Load()
	note := ""
	if behind {
		note = fmt.Sprintf(", nor acknowledged any of the %s written before the ping", protocol.FormatSize(int64(unacked)))
	}
	counters.Heartbeat.LivenessClosed.Inc() // a silent channel, maybe a busy one: not a heartbeat strategy's idle close
	// One Warn line for the close: the kernel's connection manager logs it
	// ("channel closed; reconnecting", component=kernel, with this reason and the
	// failed calls), so the channel logs none with Options.OwnerLogsClose, at Debug otherwise (both at Warn
	// made two lines for one close).
	if quiet > 0 {
		p := int64(c.pending.len())
		c.die(fmt.Sprintf("liveness check: %d %s to %s waiting with nothing read for %v, and a ping got no answer within %v%s (heartbeat.ping.on.timeout)",
			p, plural(p, "call", "calls"), c.remote, quiet, wait, note), levelOwnerLogs)
		return
	}
	c.die(fmt.Sprintf("liveness check: %d %s to %s timed out with nothing read since they were sent, and a ping got no answer within %v%s (heartbeat.ping.on.timeout)",
		n, plural(n, "call", "calls"), c.remote, wait, note), levelOwnerLogs)
}

// stallLateLimit is the most a liveness check's ping wait may end after
// its deadline (or a quarter of the wait, when shorter) before runCheck
// takes the lateness for a stall of this process and gives the reader
// stallGrace to read what arrived meanwhile before it judges: the
// heartbeat strategies' rule (their task.LateLimit and task.Grace).
const (
	stallLateLimit = 100 * time.Millisecond
	stallGrace     = 100 * time.Millisecond
)

// noteSent records that the check's ping was sent at sent and waits
// wait for its answer (WhenCheckEnds).
func (l *livenessCheck) noteSent(sent time.Time, wait time.Duration) {
	l.sent.Store(sent.UnixNano())
	l.due.Store(sent.Add(wait).UnixNano())
}

// backlogFrom is the unacknowledged bytes ahead of a liveness check's
// ping from which the peer's acknowledging more of them during the wait
// keeps the channel (runCheck). Small calls leave a few hundred bytes
// unacknowledged for a round trip; a hung peer's kernel still
// acknowledges those until its receive window is full, which such
// traffic takes minutes to fill, so below this it gets no allowance.
const backlogFrom = 64 << 10

// acked returns what the peer has acknowledged of this side's writes and
// what is written and not acknowledged yet (spi.AckCounter), ok false
// when the session cannot tell.
func (c *Channel) acked() (acked, unacked uint64, ok bool) {
	if a, is := c.sess.(spi.AckCounter); is {
		return a.Acked()
	}
	return 0, 0, false
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// QuietFloor is the shortest time a consumer channel may have calls
// waiting on it with nothing read from it before the quiet watch sends
// the liveness check's ping (checkQuiet), whatever the calls' timeouts:
// longer than the stalls a healthy provider shows under CPU starvation
// (about 2 s on a 2-vCPU machine at load 20) and than most TCP
// retransmission stalls on a lossy link (1.2-3.3 s at 20 % loss).
const QuietFloor = 3 * time.Second

// QuietBound returns how long calls may wait on a consumer channel with
// nothing read from it before the quiet watch pings the provider, when
// the longest timeout of the calls pending there is longest (0: none
// has one): max(QuietFloor, longest/2). The bound comes from what the
// calls allow, not from a setting: a provider silent for half of a call's
// own timeout has used half of what that call gives it, and a silence
// that is cut (the bound, then a ping unanswered for its wait) would have
// left the call little chance; a shorter one, a stall of a busy or
// starved provider, is never cut. Calls with shorter timeouts time out
// first and start the check after a silent timeout (checkAfterTimeout),
// as they always did; the watch adds nothing to them. It is the idea of
// gRPC's keepalive (a ping after keepalive time with nothing received
// while streams are open, the connection closed after keepalive timeout
// without its ack) and of Netty's IdleStateHandler reader-idle with
// requests outstanding, both fixed settings there, here derived from the
// calls' timeouts so that no URL key is needed: a 10 s timeout pings
// after 5 s of silence, a 1-6 s one after 3 s.
func QuietBound(longest time.Duration) time.Duration {
	return max(QuietFloor, longest/2)
}

// quietLook is how often the quiet watch looks at its channel while
// calls are pending there: a hung provider's channel is pinged between
// its QuietBound and QuietBound + quietLook after its last byte.
const quietLook = 500 * time.Millisecond

// watchQuiet starts the consumer channel's quiet watch when
// Options.Heartbeat implements spi.TimeoutCheck with the check on: one
// timer per channel, stopped (idle) while no call is pending there. The
// first call added wakes it (addPending, wakeQuiet); it then looks every
// quietLook (checkQuiet) until a look finds no call pending, and stops
// again. An idle channel so costs nothing periodic (a look every 0.5 s
// on every channel, pending or not, was 10 us of CPU per channel per
// second: 10,000 idle channels took 10 % of a CPU), and the call path
// pays one atomic load (idle) while the watch runs, the usual case under
// load, and a timer reset at most once per look when it does not.
//
// Rather than one shared ticker walking the channels that have calls
// pending: that set would need a locked insert and removal as each
// channel's calls go from none to some and back, on the call path, and a
// goroutine owned by no channel; here each channel's watch stays its
// own, stopped by die. Called once, before any call.
func (c *Channel) watchQuiet() {
	if c.opts.Side != spi.Consumer {
		return
	}
	if tc, ok := c.opts.Heartbeat.(spi.TimeoutCheck); !ok {
		return
	} else if _, on := tc.TimeoutCheck(); !on {
		return
	}
	t := time.AfterFunc(time.Hour, c.checkQuiet)
	t.Stop() // idle until the first call
	c.check.idle.Store(true)
	c.check.quiet.Store(t)
}

// addPending puts cl in the pending table, false when the table is
// closed, and wakes the quiet watch when it is idle. The watch's look
// stores idle before it counts the pending calls again, and this loads
// idle after the add: either it sees the watch idle and wakes it, or the
// look sees the call.
func (c *Channel) addPending(cl *call) bool {
	if !c.pending.add(cl) {
		return false
	}
	if c.check.idle.Load() {
		c.wakeQuiet()
	}
	return true
}

// wakeQuiet restarts the idle quiet watch (once, whoever calls it
// first): calls are pending from now, and it looks quietLook later.
func (c *Channel) wakeQuiet() {
	if !c.check.idle.CompareAndSwap(true, false) {
		return
	}
	c.check.since.Store(time.Now().UnixNano())
	t := c.check.quiet.Load()
	t.Reset(quietLook)
	select {
	case <-c.dying:
		t.Stop() // died meanwhile: die may have stopped it before the Reset
	default:
	}
}

// checkQuiet is the quiet watch's look. With no call pending it stops the
// watch (idle) until the next call (addPending). When calls have been
// pending on the channel at every look for their QuietBound (from the
// longest timeout among them, looked up only once QuietFloor has passed
// with nothing read; counted from the call that woke the watch, or from
// the first look in a row that found calls pending, or from the last
// chunk of a large write of this side's, writer.bulkAt: a peer reading a
// 40 MiB request answers nothing until it has read it, and on a
// single-stream session the ping would wait behind it) and nothing was
// read over that time, it starts the liveness check now, not at a call's
// timeout: its ping waits
// minCheckWait, the least the check after a timeout waits, capped like
// that one by the strategy's maxWait (heartbeat.ping.timeout for idle,
// heartbeat.interval for dual); a silence long enough to be pinged has
// lasted the bound already, so the ping's wait only covers its round
// trip. No answer, with still nothing read, closes the channel as
// runCheck does after timeouts. A healthy provider answers pings on its
// reader while its methods run (also with every worker busy), so a slow
// call keeps its channel. Not when the provider said its methods run on
// its reader (dispatcher=direct, KeyHelloDispatcher), where a slow method
// holds up the ping too: the check after a timeout is left for it. At most
// one check runs, and one starts per max(the bound, the provider's
// heartbeat.min.ping.interval), which keeps its pings within the
// provider's ping-flood guard even while no call runs there.
func (c *Channel) checkQuiet() {
	select {
	case <-c.dying:
		return
	default:
	}
	c.check.looks.Add(1)
	now := time.Now().UnixNano()
	if c.pending.len() == 0 {
		c.check.since.Store(0)
		c.check.idle.Store(true)
		if c.pending.len() > 0 {
			c.wakeQuiet() // a call added before idle was stored found the watch running
		}
		return
	}
	defer c.check.quiet.Load().Reset(quietLook)
	if !c.Established() {
		c.check.since.Store(0)
		return
	}
	since := c.check.since.Load()
	if since == 0 {
		c.check.since.Store(now) // the calls may have just been sent
		return
	}
	quiet := time.Duration(now - max(since, c.lastRead.Load(), c.w.bulkAt.Load()))
	if quiet < QuietFloor || c.peerRunsOnReader() {
		return
	}
	bound := QuietBound(c.pending.longestTimeout())
	if quiet < bound {
		return
	}
	gap := bound
	if peer, ok := c.PeerHeartbeat(); ok {
		if m, err := peer.Duration(keyMinPingInterval, 0); err == nil {
			gap = max(gap, m)
		}
	}
	m := mono()
	if last := c.check.last.Load(); last != 0 && m-last < int64(gap) {
		return
	}
	tc, _ := c.opts.Heartbeat.(spi.TimeoutCheck)
	maxWait, _ := tc.TimeoutCheck()
	wait := minCheckWait
	if maxWait > 0 {
		wait = min(wait, maxWait)
	}
	if !c.check.running.CompareAndSwap(false, true) {
		return
	}
	c.check.last.Store(m)
	c.check.noteSent(time.Now(), wait)
	c.beginCheck()
	if !c.goIO(func() { c.runCheck(wait, quiet.Round(time.Millisecond)) }) {
		c.endCheck()
	}
}
