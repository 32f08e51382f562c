package metrics

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync/atomic"

	"github.com/airnode/airnode/spi"
)

// Name is the extension name of the metrics filter.
const Name = "metrics"

// Order is the filter's activation order: outermost on both sides.
const Order = -200

// Builder builds metrics filters that record into one Registry. Create it
// with NewBuilder; safe for concurrent use.
type Builder struct {
	reg *Registry
}

// NewBuilder returns a builder recording into r, or into a new Registry
// when r is nil.
func NewBuilder(r *Registry) *Builder {
	if r == nil {
		r = NewRegistry()
	}
	return &Builder{reg: r}
}

// Name returns "metrics".
func (*Builder) Name() string { return Name }

// Activation switches the filter on for both sides, outermost.
func (*Builder) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Consumer, spi.Provider}, Order: Order}
}

// Registry returns the registry the builder's filters record into.
func (b *Builder) Registry() *Registry { return b.reg }

// Build returns the filter for u, whose "side" key (set by the kernel)
// must be "consumer" or "provider". Pure.
func (b *Builder) Build(u spi.URL) (spi.Filter, error) {
	side, err := SideOf(u)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return &Filter{reg: b.reg, side: side}, nil
}

// SideOf returns u's "side" key as a spi.Side; absent or another value is
// an error naming it.
func SideOf(u spi.URL) (spi.Side, error) {
	v, _ := u.Param(spi.KeySide)
	switch s := spi.Side(v); s {
	case spi.Consumer, spi.Provider:
		return s, nil
	}
	return "", fmt.Errorf("URL key %q is %q: want %q or %q", spi.KeySide, v, spi.Consumer, spi.Provider)
}

// RegistryOf returns the Registry behind a filter builder taken from a
// catalog (cat.Filter.Get(metrics.Name)), and false when b is not this
// package's Builder (a plugin replaced it).
func RegistryOf(b spi.FilterBuilder) (*Registry, bool) {
	mb, ok := b.(*Builder)
	if !ok || mb == nil {
		return nil, false
	}
	return mb.reg, true
}

// Filter records every call it sees into its Registry under its side, the
// invocation's service key and method.
type Filter struct {
	reg  *Registry
	side spi.Side
	// known caches the series of the filter's service (the first one it
	// sees: a filter is built per reference or export, so per service), so
	// that a call finds its series with a map read by method name instead
	// of a sync.Map load of the registry keyed by side, service and method
	// (copy on write; at most maxKnown methods; calls of other services
	// and further methods use the registry).
	known atomic.Pointer[knownSeries]
}

// knownSeries is one immutable generation of a filter's cache.
type knownSeries struct {
	service string
	methods map[string]*series
}

// maxKnown bounds a filter's cache.
const maxKnown = 256

// clockBase anchors the filter's clock, spi.Mono's: time.Since(clockBase)
// reads only the monotonic clock, and the readings other layers stamp on a
// call (spi.Invocation.Began, spi.Result.Ended) are on the same scale.
var clockBase = spi.MonoTime(0)

// Invoke counts the call, runs the rest of the chain, and records its
// latency and status. The latency runs from inv.Began when set (on the
// provider: when the exchange began the request, so it includes decoding
// the arguments) and to the result's Ended when set (the kernel's
// invoker's reading at the call's end), reading the clock only for what
// is missing (spi.Mono). A panic below is recorded as CLIENT_ERROR (consumer)
// or SERVER_ERROR (provider) and propagates. A call that fails while its
// context is cancelled (not timed out) is counted as cancelled, not as a
// failure (see Cancelled), unless the context's cancellation cause is an
// *spi.Error (see CancelledBy). On the provider, a call refused by access
// control before the service ran (its error's Cause is
// spi.ErrAccessDenied: the token filter's wrong or missing token) is
// neither a call nor a failure of the method: the token filter counts it
// (access.token_rejections, printed by WriteRejected), a filter plugin's
// host its plugin's (access.plugin_filter_rejections). On the provider, a
// call that succeeded but whose result was ready at or after its
// consumer's deadline (inv.Due: the exchange does not send that result
// and the consumer gets SERVER_TIMEOUT) is counted as a SERVER_TIMEOUT
// failure and as late (MethodStats.Late): the provider's success rate is
// then what its consumers saw, as far as the provider can know it (time
// a request spent in the consumer's queue and on the network is not in
// its deadline's reckoning).
func (f *Filter) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	s := f.seriesFor(inv)
	s.begin()
	start := inv.Began // the provider's exchange read the clock when it began the request
	if start == 0 {
		start = spi.Mono()
	}
	done := false
	defer func() {
		if !done {
			st := spi.StatusServerError
			if f.side == spi.Consumer {
				st = spi.StatusClientError
			}
			end := spi.Mono()
			s.end(end-start, st, false, false, end)
		}
	}()
	res := next.Invoke(ctx, inv)
	done = true
	end := res.Ended // the invoker below read the clock when the call ended
	if end == 0 {
		end = spi.Mono()
	}
	st := statusOf(res.Err)
	late := false
	if inv.Due != 0 && end >= inv.Due && st == spi.StatusOK {
		// On the provider, the result was ready after the consumer's
		// deadline: the exchange answers SERVER_TIMEOUT instead of
		// sending it, and the consumer has given up. Counted as the
		// consumer sees it, and as late (MethodStats.Late).
		st, late = spi.StatusServerTimeout, true
	}
	if res.Err == nil && res.Swallowed != nil {
		// a failure the cluster below absorbed (failsafe): the caller got
		// a zero result, the series counts what happened, as the access
		// log does
		st = statusOf(res.Swallowed)
	}
	if st != spi.StatusOK && f.side == spi.Provider && errors.Is(res.Err, spi.ErrAccessDenied) {
		// refused by access control (token) before the service: counted
		// by that filter as rejected, no call of the method
		s.active.Add(-1)
		return res
	}
	cancelled := false
	if st != spi.StatusOK && Cancelled(ctx) {
		if by := CancelledBy(ctx); by != 0 {
			st = by
		} else {
			cancelled = true
		}
	}
	s.end(end-start, st, cancelled, late, end)
	return res
}

// Cancelled reports whether a failed call's context was cancelled rather
// than timed out: the call was given up on, so its failure says nothing
// about the service. On the provider the kernel cancels a call's context
// when its consumer's connection closes (the consumer went away: Ctrl-C on
// airnode call, a crash, or a consumer that closed the connection after
// its own timeout fired); the method then usually returns ctx.Err(), which
// would otherwise be counted SERVICE_ERROR. (When the node's shutdown
// abandons the calls still running, their contexts are cancelled too, but
// with a cause that CancelledBy reads: the filter counts those as
// failures, SERVER_ERROR.) On the consumer, the caller
// cancelled its context (or the forking cluster cancelled the forks that
// lost). A passed deadline is no cancellation: it stays SERVER_TIMEOUT or
// CLIENT_TIMEOUT, a failure.
func Cancelled(ctx context.Context) bool {
	return errors.Is(ctx.Err(), context.Canceled)
}

// CancelledBy returns the status of ctx's cancellation cause
// (context.Cause) when it is an *spi.Error of a status other than OK, else
// 0: the context was cancelled by a party that failed the call with that
// status, not given up on by its caller. The kernel cancels a provider
// call abandoned by the node's own shutdown (shutdown.timeout passed, or
// told to stop at once) with such a cause, SERVER_ERROR, the status its
// consumer is answered; the filter counts that call as that failure, not
// as cancelled.
func CancelledBy(ctx context.Context) spi.Status {
	var se *spi.Error
	if errors.As(context.Cause(ctx), &se) && se.Status != spi.StatusOK {
		return se.Status
	}
	return 0
}

// statusOf is spi.StatusOf without its allocation (errors.As of a
// variable that escapes) for the usual failure, an *spi.Error itself.
func statusOf(err error) spi.Status {
	if e, ok := err.(*spi.Error); ok {
		return e.Status
	}
	return spi.StatusOf(err)
}

// seriesFor returns the series of inv's service and method on the
// filter's side, from the filter's cache or else from the registry.
func (f *Filter) seriesFor(inv *spi.Invocation) *series {
	known := f.known.Load()
	if known != nil && known.service == inv.Service {
		if s := known.methods[inv.Method]; s != nil {
			return s
		}
	}
	s := f.reg.seriesFor(f.side, inv.Service, inv.Method)
	for {
		next := &knownSeries{service: inv.Service}
		if known != nil {
			if known.service != inv.Service || len(known.methods) >= maxKnown {
				return s
			}
			next.methods = maps.Clone(known.methods)
		} else {
			next.methods = make(map[string]*series, 1)
		}
		next.methods[inv.Method] = s
		if f.known.CompareAndSwap(known, next) {
			return s
		}
		known = f.known.Load()
	}
}

var (
	_ spi.FilterBuilder = (*Builder)(nil)
	_ spi.Filter        = (*Filter)(nil)
)
