package pluginhost

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/airnode/airnode/sdk/pluginrpc"
)

// Liveness defaults: the host pings each running plugin process (the gRPC
// health service go-plugin serves beside the plugin's services) every
// DefaultPingInterval; a ping without an answer for DefaultUnresponsiveAfter
// marks the plugin unresponsive (PluginInfo.Unresponsive) until one
// answers. Only a process that answers nothing at all is unresponsive
// (stopped by SIGSTOP, frozen in a GC storm or a livelock that starves
// the gRPC server): a slow method does not delay the ping. The host does
// not kill or restart an unresponsive plugin; serve marks the services
// that depend on it NOT_SERVING for airnode.Health.
//
// A ping that fails at once with gRPC's Unavailable (the host cannot
// reach the process: it closed its listener or stopped its gRPC server,
// its socket is gone) while the process lives is pinged again after
// BrokenRecheck; when that fails the same way, the connection is
// broken: the host warns (the plugin, its pid, the ping's error), kills
// the process (its process group) by its PID and restarts it as it does a
// process that exited, so within DefaultPingInterval + BrokenRecheck of
// the break, plus the restart. Calls meanwhile are treated as while a
// dead process restarts (a filter's wait for it, pluginrpc.RestartPending).
const (
	DefaultPingInterval      = time.Second
	DefaultUnresponsiveAfter = 5 * time.Second
	BrokenRecheck            = 200 * time.Millisecond
)

// WithLiveness sets how often the host pings a running plugin (every,
// default DefaultPingInterval) and how long a ping may go unanswered
// before the plugin is marked unresponsive (after, default
// DefaultUnresponsiveAfter). after <= 0 turns the pings off, and with
// them the restart of a plugin whose connection broke (BrokenRecheck).
func WithLiveness(every, after time.Duration) Option {
	return func(h *Host) { h.pingEvery, h.unresponsiveAfter = every, after }
}

// DeadlineLogInterval is the least time between two warnings of one
// service or filter plugin that calls passed their deadline without an
// answer from it, after the first of a burst (warned of at once, calls=1):
// each says how many such calls there were since the last (deadlineLog).
const DeadlineLogInterval = 10 * time.Second

// watchLiveness pings the process of client c (generation gen) until it
// exits or the host closes, and marks the plugin unresponsive while a
// ping goes unanswered for the host's bound, with a warning when it
// begins and when it ends; a ping refused as Unavailable twice,
// BrokenRecheck apart, restarts it (restartBroken). Run by the host
// (spawn) beside supervise.
func (p *proc) watchLiveness(c *pluginrpc.Client, gen uint64, pid int) {
	ctx, cancel := context.WithCancel(context.Background())
	watcher := make(chan struct{})
	go func() {
		defer close(watcher)
		select {
		case <-c.Done():
		case <-p.h.done:
		case <-ctx.Done():
		}
		cancel()
	}()
	defer func() {
		cancel()
		<-watcher
		p.mu.Lock()
		if p.silentGen == gen {
			p.silentSince, p.silentGen = time.Time{}, 0
		}
		p.mu.Unlock()
	}()
	every, after := p.h.pingEvery, p.h.unresponsiveAfter
	if every <= 0 {
		every = DefaultPingInterval
	}
	t := time.NewTimer(every)
	defer t.Stop()
	var silent time.Time  // when the first unanswered ping was sent; zero while the plugin answers
	var refused time.Time // when the first of pings refused in a row (Unavailable) was sent
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sent := time.Now()
		pctx, pcancel := context.WithTimeout(ctx, after)
		err := c.Ping(pctx)
		pcancel()
		if status.Code(err) != codes.Unavailable {
			refused = time.Time{}
		}
		switch {
		case ctx.Err() != nil:
			return
		case status.Code(err) == codes.Unavailable && refused.IsZero():
			refused = sent
			t.Reset(BrokenRecheck) // once may be a reconnection's moment
			continue
		case status.Code(err) == codes.Unavailable:
			if p.restartBroken(c, gen, pid, err, time.Since(refused)) {
				return // the process is killed: supervise restarts it, with a watcher of its own
			}
		case err == nil && !silent.IsZero():
			p.mu.Lock()
			if p.silentGen == gen {
				p.silentSince, p.silentGen = time.Time{}, 0
			}
			p.h.stateChanged()
			p.mu.Unlock()
			p.log.Warn("plugin answers again: no longer unresponsive", "pid", pid,
				"silent_for", time.Since(silent).Round(time.Millisecond))
			silent = time.Time{}
		case errors.Is(pctx.Err(), context.DeadlineExceeded) && silent.IsZero():
			silent = sent
			p.mu.Lock()
			p.silentSince, p.silentGen = sent, gen
			p.h.stateChanged()
			p.mu.Unlock()
			p.log.Warn("plugin does not answer: a liveness ping went unanswered; the services that depend on it answer NOT_SERVING to airnode.Health until it answers again (the host does not restart it)",
				"pid", pid, "silent_for", time.Since(sent).Round(time.Millisecond), "bound", after)
		}
		if !silent.IsZero() {
			t.Reset(0) // ping again at once: the answer ends the silence
			continue
		}
		t.Reset(every)
	}
}

// restartBroken kills the process pid of generation gen, whose
// connection is broken (err: a ping refused as Unavailable since for),
// so that supervise restarts it as a process that exited, and reports
// whether it did: not when the process has exited already (supervise's
// own case), nor when it is no longer the plugin's running process or the
// host closes. The plugin is marked restarting first, so that calls
// wait for the next process as while a dead one restarts; supervise
// says why it was killed (brokenWhy).
func (p *proc) restartBroken(c *pluginrpc.Client, gen uint64, pid int, err error, since time.Duration) bool {
	select {
	case <-c.Done():
		return false
	default:
	}
	if processExited(pid) {
		return false // its exit is on the way to supervise
	}
	p.mu.Lock()
	if p.gen != gen || p.pid != pid || p.state != StateRunning || p.h.closing() {
		p.mu.Unlock()
		return false
	}
	cmd, tail := p.cmd, p.tail
	why := "killed by the host: its gRPC connection was broken while it ran (" + status.Convert(err).Message() + ")"
	p.brokenTail, p.brokenWhy = tail, why
	p.setStateLocked(StateRestarting, why+"; restarting", nil)
	p.mu.Unlock()
	p.log.Warn("connection to the plugin is broken while its process runs (liveness pings refused: it closed its listener or stopped its gRPC server, or its socket is gone): killing the process to restart it",
		"pid", pid, "err", status.Code(err).String()+": "+status.Convert(err).Message(), "broken_for", since.Round(time.Millisecond))
	tail.killedByHost(why) // go-plugin's "plugin process exited" at info, not error
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
	killGroup(pid)
	return true
}

// deadlineLog is the OnDeadline of a service or filter plugin's adapters
// (warn), one per plugin across its restarts: the first call that passes
// its deadline without the plugin's answer is warned of at once (calls=1,
// saying that more are counted), and every call of the DeadlineLogInterval
// that follows is counted and reported when it ends (calls=N, the last
// method), that report opening the next interval; an interval with none
// ends the burst. So a burst of 400 such calls logs calls=1, then calls=399,
// at most one warning per interval after the first. stop reports what the
// open interval counted and waits for its timer. Safe for concurrent use.
type deadlineLog struct {
	log   *slog.Logger
	what  string        // "service" or "filter"
	every time.Duration // DeadlineLogInterval

	mu     sync.Mutex
	timer  *time.Timer // while an interval is open: reports it when it ends
	n      int         // calls counted in the open interval
	method string      // the last of them
	closed bool
	wg     sync.WaitGroup // the timer's report running
}

func newDeadlineLog(log *slog.Logger, what string) *deadlineLog {
	return &deadlineLog{log: log, what: what, every: DeadlineLogInterval}
}

const deadlineText = " plugin did not answer calls within their deadline (stuck, or too slow for the callers' timeout)"

// warn counts one call of method whose deadline passed without the
// plugin's answer.
func (d *deadlineLog) warn(method string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil || d.closed {
		d.n++
		d.method = method
		return
	}
	d.wg.Add(1)
	d.timer = time.AfterFunc(d.every, d.report)
	d.log.Warn(d.what+deadlineText+"; the first of them: how many more followed is logged after each "+d.every.String()+" while they go on",
		"calls", 1, "method", method, "every", d.every)
}

// report logs the calls counted in the interval that just ended (the
// timer's), opening the next interval, or ends the burst when there were
// none.
func (d *deadlineLog) report() {
	defer d.wg.Done()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return // stop reports them
	}
	if d.n == 0 {
		d.timer = nil
		return
	}
	d.log.Warn(d.what+deadlineText+"; more of them since the last warning",
		"calls", d.n, "method", d.method, "every", d.every)
	d.n = 0
	d.wg.Add(1)
	d.timer = time.AfterFunc(d.every, d.report)
}

// stop reports what the open interval counted, stops its timer and waits
// for a report that is running. Idempotent.
func (d *deadlineLog) stop() {
	d.mu.Lock()
	if !d.closed {
		d.closed = true
		if d.timer != nil && d.timer.Stop() {
			d.wg.Done()
		}
		if d.n > 0 {
			d.log.Warn(d.what+deadlineText+"; more of them since the last warning (the host is closing)",
				"calls", d.n, "method", d.method, "every", d.every)
			d.n = 0
		}
	}
	d.mu.Unlock()
	d.wg.Wait()
}
