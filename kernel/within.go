package kernel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/airnode/airnode/spi"
)

// within runs f, an extension call that may not honour ctx (a registry's
// Unregister or Close, a transport's Listen, a listener's Close...), and
// waits for it or for ctx's end, whichever comes first. When ctx ends
// first, f keeps running on a goroutine of its own (left behind, as
// Shutdown leaves a method that ignores its context),
// within logs at Warn and returns an error naming op and step:
// "kernel: shutdown: registry \"mapreg\" Close did not return within
// 1s; stopped waiting for it (it may still finish later)". When ctx was cancelled rather than past its
// deadline (context.Canceled: the caller asked the operation to stop, as
// serve does on a SIGTERM during startup) nothing hung past a bound: the
// line is at Info and says so (LeftRunningError.Cancelled). With a ctx
// that never ends it calls f in place.
// A panic in f becomes a *StepPanicError (see the package-level within).
func (n *Node) within(ctx context.Context, op, step string, f func() error) error {
	return within(ctx, n.logger, op, step, f)
}

// within is Node.within logging to log. A panic in f is recovered: it
// becomes a *StepPanicError naming op and step ("kernel: export t.Echo:
// transport \"unix\" Listen on 127.0.0.1:0 panicked: boom"), logged at
// Error with its stack (f runs on a goroutine no caller can recover).
//
// A step started before ctx's end is waited for until ctx's end. A step
// started after it (a later step of a Shutdown whose ctx already ended)
// is waited for until the operation's late window closes
// (withLateWindow: one leftGrace shared by every such step of the
// operation, then lateGrace each up to a second leftGrace), so that an
// operation returns within ctx's end + 2 x leftGrace whatever the number
// of stuck steps. Without a late window in ctx, each such
// step gets leftGrace of its own.
func within(ctx context.Context, log *slog.Logger, op, step string, f func() error) error {
	return withinUndo(ctx, log, op, step, f, nil)
}

// withinUndo is within for a step that must not take effect once its
// operation has failed: when within gives up on f (a *LeftRunningError)
// and f later returns nil, undo runs on f's goroutine, so that a
// registry's Register left running by Export's ctx, which registers after
// Export returned its error, does not leave the provider's entry behind
// (nor a Refer's consumer entry). undo nil: within.
func withinUndo(ctx context.Context, log *slog.Logger, op, step string, f func() error, undo func()) error {
	guarded := func() (err error) {
		defer func() {
			if v := recover(); v != nil {
				pe := &StepPanicError{Op: op, Step: step, Value: v, Stack: debug.Stack()}
				log.Error(logMsg(pe), "op", op, "step", step, "panic", fmt.Sprint(v), "stack", string(pe.Stack))
				err = pe
			}
		}()
		return f()
	}
	if ctx.Done() == nil {
		return guarded()
	}
	done := make(chan error, 1)
	start := time.Now()
	var (
		mu        sync.Mutex
		abandoned bool // within gave up on f: on mu
	)
	late := ctx.Err() != nil // begun after ctx's end: within gives it the late window
	go func() {
		err := guarded()
		mu.Lock()
		gaveUp := abandoned
		done <- err
		mu.Unlock()
		if gaveUp && err == nil && undo != nil {
			log.Log(context.Background(), leftLevel(ctx), "undoing a step that succeeded after its operation gave up on it", "op", op, "step", step)
			undo()
		}
	}()
	if !late {
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
		}
	} else {
		deadline := start.Add(leftGrace)
		if w, _ := ctx.Value(lateWindowKey{}).(*lateWindow); w != nil && w.base.Err() != nil {
			deadline = w.deadline(start)
		}
		grace := time.NewTimer(time.Until(deadline))
		defer grace.Stop()
		select {
		case err := <-done:
			return err
		case <-grace.C:
		}
	}
	mu.Lock()
	select {
	case err := <-done: // it returned while the window closed
		mu.Unlock()
		return err
	default:
	}
	abandoned = true
	mu.Unlock()
	err := &LeftRunningError{Op: op, Step: step, Waited: givenWait(ctx, start), Cancelled: cancelled(ctx)}
	if !callerEnded(ctx, err, late) {
		if b, ok := ctx.Value(stepBoundKey{}).(time.Duration); ok && !err.Cancelled {
			err.Bound = b
		}
	}
	attrs := []any{"op", op, "step", step, "waited", err.Waited.Round(time.Millisecond)}
	if c := context.Cause(ctx); err.Cancelled && c != nil && c != context.Canceled {
		attrs = append(attrs, "cause", c.Error()) // "terminated signal received"
	}
	log.Log(context.Background(), leftLevel(ctx), logMsg(err), attrs...)
	return err
}

// callerEnded reports whether the end of the caller's ctx (the one the
// operation's late window holds: withLateWindow) ended within's wait for
// a step, rather than a bound of the kernel's own (boundStep's, the
// consumer entry's Unregister's 5 s, the drain's): it then fills in e's
// Ctx, Cause, late and elapsed, for Error and Unwrap. A ctx without a
// late window never ends by the caller's doing (withLateWindow adds one
// to every ctx that can end).
func callerEnded(ctx context.Context, e *LeftRunningError, late bool) bool {
	w, _ := ctx.Value(lateWindowKey{}).(*lateWindow)
	if w == nil || w.base.Err() == nil {
		return false
	}
	e.Ctx = w.base.Err()
	if c := context.Cause(w.base); c != nil && c != e.Ctx {
		e.Cause = c
	}
	e.late = late
	if dl, ok := w.base.Deadline(); ok && errors.Is(e.Ctx, context.DeadlineExceeded) {
		e.elapsed = max(dl.Sub(w.start), 0)
	}
	return true
}

// callerEnd is how the caller's ctx ended a wait of Shutdown's that is
// no single extension call (the drain of the calls in flight, provider
// and consumer side): Ctx and Cause as LeftRunningError's, elapsed from
// the operation's start to the caller's deadline (0 when cancelled).
type callerEnd struct {
	Ctx     error // context.DeadlineExceeded or context.Canceled
	Cause   error // context.Cause of the caller's ctx when not Ctx; nil otherwise
	elapsed time.Duration
}

// drainEndedByCaller reports whether dctx (Shutdown's drain ctx: the
// caller's ctx, with its late window, bounded by shutdown.timeout) ended
// by the caller's ctx rather than by shutdown.timeout (errDrainTimeout),
// and how; false while dctx has not ended.
func drainEndedByCaller(dctx context.Context) (callerEnd, bool) {
	if dctx.Err() == nil || context.Cause(dctx) == errDrainTimeout {
		return callerEnd{}, false
	}
	var e LeftRunningError
	if !callerEnded(dctx, &e, false) {
		return callerEnd{}, false
	}
	return callerEnd{Ctx: e.Ctx, Cause: e.Cause, elapsed: e.elapsed}, true
}

// markCallerEnded makes e, a step Shutdown stopped waiting for at the
// end of its drain (dctx: a server's connection left closing), what
// within makes of a step the caller's ctx ended: it matches the caller's
// ctx error and says so. A drain ended by shutdown.timeout, a bound of
// the kernel's own, leaves e as it is.
func markCallerEnded(dctx context.Context, e *LeftRunningError) {
	if c, ok := drainEndedByCaller(dctx); ok {
		e.Ctx, e.Cause, e.elapsed = c.Ctx, c.Cause, c.elapsed
		e.Cancelled = errors.Is(c.Ctx, context.Canceled)
	}
}

// did says what the caller's ctx did, for an error's "did not return
// before ...": "the caller's context deadline passed, after 300ms" (with
// " (cause: ...)" for a ctx with a cause), or "the caller's context was
// cancelled".
func (c callerEnd) did() string {
	s := "the caller's context was cancelled"
	if errors.Is(c.Ctx, context.DeadlineExceeded) {
		s = "the caller's context deadline passed"
		if c.elapsed > 0 {
			s += fmt.Sprintf(", after %v", roundWait(c.elapsed))
		}
	}
	if c.Cause != nil {
		s += " (cause: " + c.Cause.Error() + ")"
	}
	return s
}

// errs returns Ctx and Cause, those that are set, for an Unwrap.
func (c callerEnd) errs() []error {
	var out []error
	for _, err := range []error{c.Ctx, c.Cause} {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

// callerEndedError is an error whose text says the caller's ctx ended
// what it reports, and that matches that ctx's error (and cause) with
// errors.Is.
type callerEndedError struct {
	msg string
	end callerEnd
}

func (e *callerEndedError) Error() string   { return e.msg }
func (e *callerEndedError) Unwrap() []error { return e.end.errs() }

// cancelled reports whether ctx ended by cancellation (context.Canceled:
// its caller asked the operation to stop) rather than by its deadline.
func cancelled(ctx context.Context) bool { return errors.Is(ctx.Err(), context.Canceled) }

// leftLevel is the level of the line saying a step was left running at
// ctx's end: Warn when ctx's deadline passed (the step hung past its
// bound), Info when ctx was cancelled (a stop was asked for).
func leftLevel(ctx context.Context) slog.Level {
	if cancelled(ctx) {
		return slog.LevelInfo
	}
	return slog.LevelWarn
}

// undoTimeout bounds withinUndo's undo of a step that succeeded late (an
// Unregister after a Register left running): the operation has returned,
// nobody waits for it.
const undoTimeout = 10 * time.Second

// leftGrace is the late window of an operation: how long within waits,
// in all, for the extension calls started after the end of the
// operation's ctx (shared by all of them: withLateWindow), and then how
// long at most the calls started after the window closed get, in all.
const leftGrace = 50 * time.Millisecond

// lateGrace is what each extension call started after the late window
// closed gets, within the second leftGrace: a call that does not block
// returns in far less.
const lateGrace = 20 * time.Millisecond

// lateWindowKey keys an operation's *lateWindow in its ctx.
type lateWindowKey struct{}

// lateWindow is the one grace an operation (Shutdown, Export, Refer,
// Unexport) gives, past its ctx's end, to every extension call it starts
// after that end: it opens when the first such call starts and closes
// leftGrace later; the calls started after it closed get lateGrace each,
// until leftGrace after that.
type lateWindow struct {
	base  context.Context // the operation's ctx: the caller's
	start time.Time       // when the operation began (LeftRunningError's elapsed)
	mu    sync.Mutex
	end   time.Time // on mu; zero until the first late call
}

// withLateWindow returns ctx carrying a late window of its own, for an
// operation that makes several extension calls through within. A ctx
// that never ends, or one that already carries a window (an operation
// inside another: Shutdown's Reference closes), is returned unchanged.
func withLateWindow(ctx context.Context) context.Context {
	if ctx.Done() == nil || ctx.Value(lateWindowKey{}) != nil {
		return ctx
	}
	return context.WithValue(ctx, lateWindowKey{}, &lateWindow{base: ctx, start: time.Now()})
}

// deadline is when within stops waiting for a call started at start,
// after the base ctx's end.
func (w *lateWindow) deadline(start time.Time) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.end.IsZero() {
		w.end = start.Add(leftGrace)
	}
	if !start.After(w.end) {
		return w.end
	}
	d, last := start.Add(lateGrace), w.end.Add(leftGrace)
	if d.After(last) {
		d = last
	}
	return d
}

// StepPanicError is part of the error of Shutdown, Export, Unexport or
// Refer when an extension call they make (a transport's Listen, a
// registry's Register, Subscribe, Unregister or Close) panicked: the
// panic is recovered, logged at Error with its stack, and the operation
// fails with this error instead of the process crashing.
// Op and Step are LeftRunningError's; Value is what was passed to panic
// (an error in it is reachable through errors.Is and errors.As); Stack
// is the panicking goroutine's stack, for a log. Error says "kernel:
// shutdown: registry \"mapreg\" Close panicked: boom".
type StepPanicError struct {
	Op    string // the operation, as LeftRunningError.Op: "shutdown", "export SERVICE"
	Step  string // the extension and its call, as LeftRunningError.Step
	Value any    // what the extension passed to panic
	Stack []byte // the panicking goroutine's stack (runtime/debug.Stack), for a log
}

// Error says "kernel: OP: STEP panicked: VALUE".
func (e *StepPanicError) Error() string {
	return fmt.Sprintf("kernel: %s: %s panicked: %v", e.Op, e.Step, e.Value)
}

// Unwrap returns the panic value when it is an error, else nil.
func (e *StepPanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// LeftRunningError is part of the error of Shutdown, Export, Unexport or
// Refer when an extension call they wait on did not return by the end of
// their ctx: they stopped waiting and left it running on a goroutine of
// its own (it ends if the call ever returns). Op is "shutdown", "export
// SERVICE" or another operation; Step names the extension and the call
// (`registry "mapreg" Close`, `transport "unix" Listen on 127.0.0.1:0`).
// Match it with errors.As.
//
// When the caller's ctx ended the wait (its deadline passed, or it was
// cancelled), Ctx holds ctx's error and Unwrap returns it (and Cause), so
// that errors.Is(err, context.DeadlineExceeded) or context.Canceled
// holds, as for a call; when a bound of the kernel's own ended it (Bound:
// a provider's Register, WithRegisterTimeout; the consumer entry's
// Unregister at Shutdown, 5 s) Ctx is nil and neither matches.
type LeftRunningError struct {
	Op     string        // the operation: "shutdown", "export SERVICE", "refer SERVICE", "unexport SERVICE"
	Step   string        // the extension and its call: `registry "mapreg" Close`
	Waited time.Duration // how long the caller waited for it
	// Bound is the bound the kernel gave the call itself (a provider's
	// Register: WithRegisterTimeout), when that ended the wait rather
	// than the caller's ctx; 0 otherwise.
	Bound time.Duration
	// Cancelled: the operation's ctx was cancelled (a stop was asked
	// for), not past its deadline; the kernel logs it at Info, not Warn.
	Cancelled bool
	// Why is what the extension said of its state when the wait ended
	// (a registry's spi.RegistryUnreachable: "zookeeper registry: no
	// session with 127.0.0.1:2181: ...: connection refused"); "" when it
	// said nothing. Error then gives it instead of stoppedWaiting.
	Why string
	// Ctx is the error of the caller's ctx (context.DeadlineExceeded or
	// context.Canceled) when its end ended the wait; nil when a bound of
	// the kernel's own did (Bound).
	Ctx error
	// Cause is context.Cause of the caller's ctx when it is not Ctx
	// (context.WithTimeoutCause, WithCancelCause); nil otherwise.
	Cause error

	late    bool          // the step began after the caller's ctx had ended (a later step of a Shutdown)
	elapsed time.Duration // from the operation's start to the caller's deadline; 0: unknown
}

// Error says "kernel: shutdown: registry \"mapreg\" Close did not return
// within 1s; stopped waiting for it (it may still finish later)" (the
// Bound, else how long it was waited for; with Why, ": " and Why instead
// of stoppedWaiting). When the caller's deadline ended the wait (Ctx) it
// says so: "kernel: refer t.Echo: registry \"zookeeper\" Subscribe of
// t.Echo did not return before the caller's context deadline passed,
// after 300ms: zookeeper registry: no session ..." (300ms: from the
// operation's start; a step begun after that deadline "did not return
// within 50ms, begun after the caller's context deadline passed"), with
// " (cause: ...)" after the deadline for a ctx with a cause. When
// Cancelled: "kernel: export t.Echo: registry \"zookeeper\" Register of
// t.Echo not waited for: ctx cancelled, a stop was asked for; it may
// still finish later".
func (e *LeftRunningError) Error() string {
	if e.Cancelled {
		return fmt.Sprintf("kernel: %s: %s not waited for: ctx cancelled, a stop was asked for; it may still finish later", e.Op, e.Step)
	}
	d := e.Bound
	if d == 0 {
		d = roundWait(e.Waited)
	}
	ended := "the caller's context deadline passed"
	if errors.Is(e.Ctx, context.Canceled) {
		ended = "the caller's context was cancelled"
	}
	var msg string
	switch {
	case e.Ctx == nil:
		msg = fmt.Sprintf("kernel: %s: %s did not return within %v", e.Op, e.Step, d)
	case e.late:
		msg = fmt.Sprintf("kernel: %s: %s did not return within %v, begun after %s", e.Op, e.Step, d, ended)
		if e.elapsed > 0 {
			msg += fmt.Sprintf(" (after %v)", roundWait(e.elapsed))
		}
	default:
		el := e.elapsed
		if el == 0 {
			el = e.Waited
		}
		msg = fmt.Sprintf("kernel: %s: %s did not return before %s, after %v", e.Op, e.Step, ended, roundWait(el))
	}
	if e.Ctx != nil && e.Cause != nil {
		msg += " (cause: " + e.Cause.Error() + ")"
	}
	if e.Why != "" {
		return msg + ": " + e.Why
	}
	return msg + "; " + stoppedWaiting
}

// Unwrap returns Ctx and Cause, those that are set.
func (e *LeftRunningError) Unwrap() []error {
	var out []error
	for _, err := range []error{e.Ctx, e.Cause} {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

// stoppedWaiting is what a LeftRunningError says of its step, for the
// reader of the error or of the Warn record (airnode call's, when its
// --timeout ran out while referring): the operation no longer waits for
// the extension call, which goes on on a goroutine of its own and may
// still return (nu83 #2: it said "left running").
const stoppedWaiting = "stopped waiting for it (it may still finish later)"

// givenWait is how long a step started at start was waited for: until
// ctx's deadline when that ended the wait (a loaded machine notices a
// deadline tens of ms late, which a "did not return within 10.1s" would
// blame on the step: CI of ee8b769, TestF14CallSubscribeNeverReturns at
// load 12), else until now.
func givenWait(ctx context.Context, start time.Time) time.Duration {
	waited := time.Since(start)
	if dl, ok := ctx.Deadline(); ok && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		if given := dl.Sub(start); given > 0 && given < waited {
			return given
		}
	}
	return waited
}

// roundWait rounds a wait for a message: to 100 ms from a second up (a
// 10 s ctx that began a few ms before the step reads 10s), to the
// millisecond below.
func roundWait(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

// stepBoundKey keys, in the ctx within waits on, the bound the kernel
// gave the step itself (boundStep), for LeftRunningError.Bound.
type stepBoundKey struct{}

// stepBoundGrace is how long within waits, past the end of the ctx
// boundStep gives the step, before it leaves the step running: a step
// that honours its ctx returns its own error (a registry's "no session
// ... context deadline exceeded") rather than race the kernel's.
const stepBoundGrace = time.Second

// boundStep bounds a step by d when ctx has no sooner deadline: it
// returns the ctx to give the step (ending d from now) and the ctx for
// within to wait on (ending stepBoundGrace later, carrying d for
// LeftRunningError.Bound). Both are ctx itself when d <= 0 or ctx ends
// first. cancel releases them.
func boundStep(ctx context.Context, d time.Duration) (step, wait context.Context, cancel context.CancelFunc) {
	if dl, ok := ctx.Deadline(); d <= 0 || ok && time.Until(dl) <= d {
		return ctx, ctx, func() {}
	}
	step, c1 := context.WithTimeout(ctx, d)
	wait, c2 := context.WithTimeout(context.WithValue(ctx, stepBoundKey{}, d), d+stepBoundGrace)
	return step, wait, func() { c1(); c2() }
}

// closeAllWithin is closeAllBecause bounded by ctx: when ctx ends first,
// the conns still closing are left running, and the error, logged at
// Warn, names for each the extension call it waits on (conn.phase: a
// transport's Dial that ignores its ctx, a session's Open or Close, a
// heartbeat's Watch or stop). A session Close or heartbeat stop that
// failed (conn.failed: a recovered panic is an *extension.PanicError)
// is in the error too, whether or not ctx ended.
func (p *connPool) closeAllWithin(ctx context.Context, n *Node, reason string) error {
	p.mu.Lock()
	cs := make([]*conn, 0, len(p.conns)+len(p.leaving))
	for _, e := range p.conns {
		cs = append(cs, e.c)
	}
	held := len(cs) // cs[:held] are held (closed here), the others released
	for c := range p.leaving {
		cs = append(cs, c)
	}
	p.mu.Unlock()
	err := n.within(ctx, "shutdown", "closing the consumer connections", func() error {
		p.closeAllBecause(reason)
		return nil
	})
	// A session Close or heartbeat stop that failed.
	var errs []error
	for _, f := range p.takeFailures() {
		errs = append(errs, fmt.Errorf("kernel: shutdown: %w", f))
	}
	for _, c := range cs[:held] {
		if f := c.failed.Load(); f != nil {
			errs = append(errs, fmt.Errorf("kernel: shutdown: %w", *f))
		}
	}
	var left *LeftRunningError
	if !errors.As(err, &left) {
		return errors.Join(append(errs, err)...)
	}
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
		e := &LeftRunningError{Op: "shutdown", Step: step, Waited: left.Waited, Cancelled: left.Cancelled,
			Ctx: left.Ctx, Cause: left.Cause, late: left.late, elapsed: left.elapsed}
		n.logger.Log(context.Background(), leftLevel(ctx), logMsg(e), "op", e.Op, "step", step)
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
		close(r.done)
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
			var pe *StepPanicError
			if errors.As(uerr, &left) && ctx.Err() != nil || errors.As(uerr, &pe) {
				errs = append(errs, uerr) // a panic fails the step
			} else {
				n.logger.Warn("cannot unregister consumer", "service", r.key, "err", uerr)
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
	r.warns.close() // the summary of the lines left out, if one is pending
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
// drain's end: a server's own shutdown returns within 0.5 s of it (0.6 s
// with dispatcher=direct; Node.Shutdown).
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

// eachConcurrently calls f on every item of items, each on a goroutine of
// its own, waits for them all and returns their errors, in items' order
// (nil ones left out). Shutdown closes its exporters' and references'
// registry entries so: the calls stuck on one registry all end at the
// same ctx's end and share one late window, however many there are.
func eachConcurrently[T any](items []T, f func(T) error) []error {
	out := make([]error, len(items))
	var wg sync.WaitGroup
	for i, it := range items {
		wg.Go(func() { out[i] = f(it) })
	}
	wg.Wait()
	var errs []error
	for _, err := range out {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// logMsg is a log record's msg made from err: its text without the
// "kernel: " prefix, which the record's component attribute says (the
// error returned to the caller keeps it).
func logMsg(err error) string { return strings.TrimPrefix(err.Error(), "kernel: ") }
