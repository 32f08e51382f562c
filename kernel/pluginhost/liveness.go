package pluginhost

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

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
const (
	DefaultPingInterval      = time.Second
	DefaultUnresponsiveAfter = 5 * time.Second
)

// WithLiveness sets how often the host pings a running plugin (every,
// default DefaultPingInterval) and how long a ping may go unanswered
// before the plugin is marked unresponsive (after, default
// DefaultUnresponsiveAfter). after <= 0 turns the pings off.
func WithLiveness(every, after time.Duration) Option {
	return func(h *Host) { h.pingEvery, h.unresponsiveAfter = every, after }
}

// DeadlineLogInterval is the least time between two warnings of one
// service or filter plugin that calls passed their deadline without an
// answer from it; each says how many such calls there were since the
// last.
const DeadlineLogInterval = 10 * time.Second

// watchLiveness pings the process of client c (generation gen) until it
// exits or the host closes, and marks the plugin unresponsive while a
// ping goes unanswered for the host's bound, with a warning when it
// begins and when it ends. Run by the host (spawn) beside supervise.
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
	var silent time.Time // when the first unanswered ping was sent; zero while the plugin answers
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
		switch {
		case ctx.Err() != nil:
			return
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

// deadlineWarner returns the OnDeadline of a service or filter plugin's
// adapter: a warning at most once per DeadlineLogInterval naming the
// plugin (log's attributes), with how many calls passed their deadline
// without its answer since the last warning and the last such method.
func deadlineWarner(log *slog.Logger, what string) func(method string) {
	var (
		mu   sync.Mutex
		last time.Time
		n    int
	)
	return func(method string) {
		mu.Lock()
		n++
		if !last.IsZero() && time.Since(last) < DeadlineLogInterval {
			mu.Unlock()
			return
		}
		count := n
		n, last = 0, time.Now()
		mu.Unlock()
		log.Warn(what+" plugin did not answer calls within their deadline (stuck, or too slow for the callers' timeout)",
			"calls", count, "method", method, "every", DeadlineLogInterval)
	}
}
