package kernel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/airnode/airnode/spi"
)

// within runs f, an extension call that may not honour ctx (a registry's
// Unregister or Close, a transport's Listen, a listener's Close...), and
// waits for it or for ctx's end, whichever comes first. When ctx ends
// first, f keeps running on a goroutine of its own (left behind, as
// Shutdown leaves a method that ignores its context: tester19 finding
// 2), within logs at Warn and returns an error naming op and step:
// "kernel: shutdown: registry \"mapreg\" Close did not return within
// ctx; left running". With a ctx that never ends it calls f in place.
func (n *Node) within(ctx context.Context, op, step string, f func() error) error {
	return within(ctx, n.logger, op, step, f)
}

// within is Node.within logging to log.
func within(ctx context.Context, log *slog.Logger, op, step string, f func() error) error {
	if ctx.Done() == nil {
		return f()
	}
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- f() }()
	// A step started after ctx's end (a later step of a Shutdown whose
	// ctx already ended) still gets leftGrace: a call that does not block
	// returns in far less.
	grace := time.NewTimer(leftGrace)
	defer grace.Stop()
	ended := ctx.Done()
	if ctx.Err() == nil {
		grace.Stop()
	} else {
		ended = nil
	}
	select {
	case err := <-done:
		return err
	case <-ended:
	case <-grace.C:
	}
	err := &LeftRunningError{Op: op, Step: step, Waited: time.Since(start)}
	log.Warn(err.Error(), "op", op, "step", step, "waited", err.Waited.Round(time.Millisecond))
	return err
}

// leftGrace is how long within waits for an extension call started
// after ctx's end before leaving it behind.
const leftGrace = 50 * time.Millisecond

// LeftRunningError is part of the error of Shutdown, Export, Unexport or
// Refer when an extension call they wait on did not return by the end of
// their ctx: they stopped waiting and left it running on a goroutine of
// its own (it ends if the call ever returns). Op is "shutdown", "export
// SERVICE" or another operation; Step names the extension and the call
// (`registry "mapreg" Close`, `transport "unix" Listen on 127.0.0.1:0`).
// Match it with errors.As.
type LeftRunningError struct {
	Op     string
	Step   string
	Waited time.Duration // how long the caller waited for it
}

// Error says "kernel: shutdown: registry \"mapreg\" Close did not return
// within ctx; left running".
func (e *LeftRunningError) Error() string {
	return fmt.Sprintf("kernel: %s: %s did not return within ctx; left running", e.Op, e.Step)
}

// closeAllWithin is closeAllBecause bounded by ctx: when ctx ends first,
// the conns still closing are left running, and the error, logged at
// Warn, names for each the extension call it waits on (conn.phase: a
// transport's Dial that ignores its ctx, a session's Close, a heartbeat's
// stop).
func (p *connPool) closeAllWithin(ctx context.Context, n *Node, reason string) error {
	p.mu.Lock()
	cs := make([]*conn, 0, len(p.conns)+len(p.leaving))
	for _, e := range p.conns {
		cs = append(cs, e.c)
	}
	for c := range p.leaving {
		cs = append(cs, c)
	}
	p.mu.Unlock()
	err := n.within(ctx, "shutdown", "closing the consumer connections", func() error {
		p.closeAllBecause(reason)
		return nil
	})
	var left *LeftRunningError
	if !errors.As(err, &left) {
		return err
	}
	var errs []error
	for _, c := range cs {
		select {
		case <-c.done:
			continue
		default:
		}
		step := "consumer connection to " + c.addr
		if ph := c.phase.Load(); ph != nil {
			step = *ph
		}
		e := &LeftRunningError{Op: "shutdown", Step: step, Waited: left.Waited}
		n.logger.Warn(e.Error(), "op", e.Op, "step", step)
		errs = append(errs, e)
	}
	if len(errs) == 0 {
		return err
	}
	return errors.Join(errs...)
}

// closeWithin is Close bounded by ctx (Shutdown's): each registry call
// (the consumer entry's Unregister, the directory's unsubscribe, a
// direct registry's Close) that does not return by ctx's end is left
// running and named in the error.
func (r *Reference) closeWithin(ctx context.Context) error {
	var err error
	r.once.Do(func() {
		r.closed.Store(true)
		err = r.closeOwnedWithin(ctx, "shutdown")
		n := r.node
		n.mu.Lock()
		for i, x := range n.references {
			if x == r {
				n.references = append(n.references[:i], n.references[i+1:]...)
				break
			}
		}
		n.mu.Unlock()
	})
	return err
}

// closeOwnedWithin releases what the reference owns, each registry call
// bounded by ctx (within; the consumer entry's Unregister also by 5 s);
// op prefixes the errors of calls left running.
func (r *Reference) closeOwnedWithin(ctx context.Context, op string) error {
	n := r.node
	var errs []error
	if r.shared != nil {
		uctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		step := fmt.Sprintf("registry %q Unregister of the consumer entry of %s", r.regName, r.key)
		if uerr := n.within(uctx, op, step, func() error { return r.shared.Unregister(uctx, r.consumer) }); uerr != nil {
			var left *LeftRunningError
			if errors.As(uerr, &left) && ctx.Err() != nil {
				errs = append(errs, uerr)
			} else {
				n.logger.Warn("kernel: cannot unregister consumer", "service", r.key, "err", uerr)
			}
		}
		cancel()
	}
	if r.dir != nil {
		step := fmt.Sprintf("registry %q unsubscribe of %s (its directory's Close)", r.regName, r.key)
		if err := n.within(ctx, op, step, r.dir.Close); err != nil {
			errs = append(errs, err)
		}
	}
	if r.reg != nil {
		step := fmt.Sprintf("registry %q Close (of reference %s)", r.regName, r.key)
		if err := n.within(ctx, op, step, r.reg.Close); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// registryName is the scheme of the registry URL key (the name of its
// extension), or key itself when it does not parse.
func registryName(key string) string {
	if u, err := spi.Parse(key); err == nil && u.Scheme() != "" {
		return u.Scheme()
	}
	return key
}

// serverGrace is how long Shutdown waits for its servers past the
// drain's end: a server's own shutdown returns within about 0.4 s of it.
const serverGrace = time.Second

// awaitServers waits for done, or for dctx's end plus serverGrace.
func awaitServers(dctx context.Context, done <-chan struct{}) {
	select {
	case <-done:
		return
	case <-dctx.Done():
	}
	t := time.NewTimer(serverGrace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}
