// Package task runs one channel's periodic heartbeat check on a Go runtime
// timer (time.AfterFunc), so an idle channel costs a timer and no goroutine:
// the runtime keeps every timer in its per-P heap, which plays the role of
// the hashed timing wheel Dubbo 2.7.0 shares between channels.
//
// A Task is safe for concurrent use. Stop cancels the context given to the
// check and its work, and returns only after every check, every work
// function and the channel closer started by the Task have returned.
package task

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/internal/ratelog"
	"github.com/airnode/airnode/spi"
)

// armed counts the timers of every Task in the process that are waiting to
// fire.
var armed atomic.Int64

// Armed returns how many Task timers in the process are waiting to fire:
// the heartbeat's timer count, for tests and the idle-versus-dual
// comparison.
func Armed() int64 { return armed.Load() }

// Check is one run of a periodic heartbeat check at time now. It returns
// the delay until the next run (a negative delay ends the Task) and
// optional work that runs after the next run is scheduled, so a slow ping
// does not delay the ticker. Checks of one Task never overlap; work
// functions may overlap with later checks and with each other. ctx ends
// when the Task is stopped.
type Check func(ctx context.Context, now time.Time) (next time.Duration, work func(ctx context.Context))

// Task is a self-rescheduling timer running a Check.
type Task struct {
	check  Check
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	timer    *time.Timer
	stopped  bool
	closing  bool
	closed   chan struct{} // closed when the closer goroutine returns
	closeCh  spi.Channel
	inflight sync.WaitGroup // one per armed timer and per running check or work
	due      time.Time      // when the armed timer is due (guarded by mu)

	// Used by the running check only (checks never overlap; mu orders
	// one run's writes before the next run's reads).
	late     time.Duration // how much later than due the running check started
	deferred bool          // the run before the running one deferred its verdict (Defer)
	deferNow bool          // the running check deferred its verdict
}

// New returns a Task that will run check once started.
func New(check Check) *Task {
	ctx, cancel := context.WithCancel(context.Background())
	return &Task{check: check, ctx: ctx, cancel: cancel}
}

// Start schedules the first check after delay. Call it once; it never
// blocks.
func (k *Task) Start(delay time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped || k.timer != nil {
		return
	}
	k.inflight.Add(1)
	armed.Add(1)
	k.due = time.Now().Add(delay)
	k.timer = time.AfterFunc(delay, k.fire)
}

func (k *Task) fire() {
	defer k.inflight.Done() // the armed timer's count, inherited by this run
	armed.Add(-1)
	k.mu.Lock()
	stopped, due := k.stopped, k.due
	k.mu.Unlock()
	if stopped {
		return
	}
	now := time.Now()
	k.late = max(0, now.Sub(due))
	k.deferred, k.deferNow = k.deferNow, false
	next, work := k.check(k.ctx, now)
	k.mu.Lock()
	if !k.stopped && next >= 0 {
		k.inflight.Add(1)
		armed.Add(1)
		k.due = time.Now().Add(next)
		k.timer.Reset(next)
	}
	stopped = k.stopped
	k.mu.Unlock()
	if work != nil && !stopped {
		work(k.ctx)
	}
}

// LateLimit is the most a check may run late (Late) before it takes the
// lateness for a stall of this process: a timer of a running process is
// late by microseconds, a loaded machine's by milliseconds; a GC pause,
// SIGSTOP, a frozen VM or a starved CPU share makes it seconds.
const LateLimit = 100 * time.Millisecond

// Grace is how long a check that deferred its verdict (Defer) waits
// before judging: time for the channel's reader, resumed with the rest of
// the process, to read what the peer sent meanwhile.
const Grace = 100 * time.Millisecond

// Late returns how much later than due the running check started (0 when
// on time): the delay the previous run returned, or Start's, counts from
// when it was scheduled. Call it from the Task's check only.
func (k *Task) Late() time.Duration { return k.late }

// Defer reports whether the running check should defer its verdict on
// ch: late (Late, or how much longer than asked a wait of the check's
// took) is more than min(LateLimit, limit/4), at least 1 ms, where limit
// is the silence the check allows; so this process did not run for about
// that long, and the channel's reader has not yet read what the peer
// sent meanwhile (answers already waiting in the socket). The check then
// neither closes ch nor counts a miss: it returns Grace as its next delay
// and judges then. At most one run in a row defers, so a peer really
// silent is still judged at most late plus Grace after its bound. what
// says what ran late in the Info line Defer logs, rate-limited ("check
// ran", "ping's wait ended"): "heartbeat check ran 1.9s late (this process did not run): judging after the
// reader catches up". Call it from the Task's check only.
func (k *Task) Defer(late, limit time.Duration, ch spi.Channel, strategy, what string) bool {
	if k.deferred || late <= max(min(LateLimit, limit/4), time.Millisecond) {
		return false
	}
	k.deferNow = true
	logLate(late, ch, strategy, what)
	return true
}

// lateLog bounds Defer's Info lines: a process stalled for seconds stalls
// every channel's checks at once.
var lateLog = ratelog.Limiters{SummaryAttrs: []any{"component", "heartbeat"}}

func logLate(late time.Duration, ch spi.Channel, strategy, what string) {
	l := slog.Default()
	if !l.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	msg := fmt.Sprintf("heartbeat %s %v late (this process did not run): judging after the reader catches up", what, late.Round(time.Millisecond))
	class := "heartbeat " + strategy + " " + what + " late"
	if ok, suppressed, n := lateLog.For(l).Event(class, time.Now(), slog.LevelInfo, msg); ok {
		l.Info(msg, ratelog.Attrs([]any{"component", "heartbeat", "heartbeat", strategy, "side", string(ch.Side()),
			"peer", ch.RemoteAddr(), "late", late.Round(time.Millisecond)}, suppressed, n)...)
	}
}

// CloseChannel closes ch with reason from a goroutine of its own, at most
// once per Task. The separate goroutine matters: ch.Close makes the kernel
// call the heartbeat's stop, which would otherwise wait for the very check
// that is closing the channel. Stop waits for that goroutine until ch.Done
// is closed, so a channel must close Done before it calls stop from inside
// Close.
func (k *Task) CloseChannel(ch spi.Channel, reason string) {
	k.closeChannel(ch, func() { ch.Close(reason) })
}

// CloseChannelExpected is CloseChannel for a close the peer's settings make
// expected: logged at Info when ch implements spi.ExpectedCloser.
func (k *Task) CloseChannelExpected(ch spi.Channel, reason string) {
	if e, ok := ch.(spi.ExpectedCloser); ok {
		k.closeChannel(ch, func() { e.CloseExpected(reason) })
		return
	}
	k.CloseChannel(ch, reason)
}

func (k *Task) closeChannel(ch spi.Channel, closeIt func()) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped || k.closing {
		return
	}
	k.closing = true
	// a channel whose connection never came up (spi.Established: its
	// first ping unanswered) ends a connection attempt, which the
	// kernel counts as a failed connect: not a heartbeat close
	// (tester84 #9)
	if e, ok := ch.(spi.Established); !ok || e.Established() {
		counters.Heartbeat.IdleClosed.Inc()
	}
	k.closeCh = ch
	k.closed = make(chan struct{})
	go func() {
		defer close(k.closed)
		closeIt()
	}()
}

// Stop ends the Task and waits as described in the package comment.
// Idempotent; safe to call concurrently.
func (k *Task) Stop() {
	k.mu.Lock()
	if !k.stopped {
		k.stopped = true
		if k.timer != nil && k.timer.Stop() {
			k.inflight.Done() // the armed run will never happen
			armed.Add(-1)
		}
	}
	closed, ch := k.closed, k.closeCh
	k.mu.Unlock()
	k.cancel()
	k.inflight.Wait()
	if closed != nil {
		select {
		case <-closed:
		case <-ch.Done():
		}
	}
}
