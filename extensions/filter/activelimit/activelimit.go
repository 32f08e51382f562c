package activelimit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/airnode/airnode/extensions/filter/internal/limitkey"
	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/spi"
)

// Name is the extension name of this filter.
const Name = "activelimit"

// Key is the URL key that activates the filter and holds the limit.
const Key = "actives"

// MaxActives bounds the "actives" value.
const MaxActives = 1 << 20

// DefaultTimeout is the wait for a slot when "timeout" is absent: the
// kernel's default call timeout.
const DefaultTimeout = 1000 * time.Millisecond

// Builder builds activelimit filters. The zero value is ready to use.
type Builder struct{}

// Name returns "activelimit".
func (Builder) Name() string { return Name }

// Activation switches the filter on for consumers whose URL has
// "actives", at service level or for some method (spi.Activation.PerMethod),
// per provider: below the cluster and the balancer.
func (Builder) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Consumer}, Key: Key, Order: 0, PerProvider: true, PerMethod: true}
}

// Build checks every "actives" key of u and its timeouts and returns the
// filter. Pure.
func (Builder) Build(u spi.URL) (spi.Filter, error) {
	if err := limitkey.Check(u, Key, MaxActives); err != nil {
		return nil, fmt.Errorf("activelimit: %w", err)
	}
	if _, err := u.Duration("timeout", DefaultTimeout); err != nil {
		return nil, fmt.Errorf("activelimit: %w", err)
	}
	return &Filter{url: u}, nil
}

// Filter holds calls of a method beyond its limit until a slot frees.
type Filter struct {
	url     spi.URL
	methods sync.Map // method -> *limit, or error for a bad method-level timeout
}

// limit is one method's slots (a semaphore) and its wait.
type limit struct {
	max   int
	slots chan struct{}
	wait  time.Duration
}

func (f *Filter) limitFor(method string) (*limit, error) {
	if v, ok := f.methods.Load(method); ok {
		if err, bad := v.(error); bad {
			return nil, err
		}
		return v.(*limit), nil
	}
	var v any
	n, _ := f.url.MethodInt(method, Key, 0) // checked in Build
	wait, err := f.url.MethodDuration(method, "timeout", DefaultTimeout)
	switch {
	case err != nil:
		v = spi.Errorf(spi.StatusClientError, "activelimit: %v", err)
	case n > 0:
		v = &limit{max: int(n), slots: make(chan struct{}, n), wait: wait}
	default:
		v = (*limit)(nil)
	}
	v, _ = f.methods.LoadOrStore(method, v)
	if err, bad := v.(error); bad {
		return nil, err
	}
	return v.(*limit), nil
}

// Invoke takes a slot of the method, waiting up to its timeout or ctx's
// end, runs the call and frees the slot. It returns CLIENT_TIMEOUT when no
// slot freed in time (or ctx's deadline passed), CLIENT_ERROR when ctx was
// cancelled, without calling next.
func (f *Filter) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	l, err := f.limitFor(inv.Method)
	if err != nil {
		return spi.Result{Err: err}
	}
	if l == nil {
		return next.Invoke(ctx, inv)
	}
	select {
	case l.slots <- struct{}{}:
	default:
		if err := l.acquire(ctx); err != nil {
			return spi.Result{Err: f.refusal(inv, l, err)}
		}
	}
	defer func() { <-l.slots }()
	return next.Invoke(ctx, inv)
}

// errWaited reports a wait that reached the method's timeout.
var errWaited = errors.New("activelimit: waited the whole timeout")

// acquire waits for a slot up to l.wait or ctx's end.
func (l *limit) acquire(ctx context.Context) error {
	t := time.NewTimer(l.wait)
	defer t.Stop()
	select {
	case l.slots <- struct{}{}:
		return nil
	case <-t.C:
		return errWaited
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *Filter) refusal(inv *spi.Invocation, l *limit, err error) *spi.Error {
	if errors.Is(err, context.Canceled) {
		return spi.Errorf(spi.StatusClientError, "activelimit: %s.%s: cancelled while waiting for one of %d call slots (actives=%d): %w",
			inv.Service, inv.Method, l.max, l.max, err)
	}
	counters.Access.ActivesTimeouts.Inc()
	if err != errWaited {
		return spi.Errorf(spi.StatusClientTimeout, "activelimit: %s.%s: %d calls in flight (actives=%d) and none finished before the caller's deadline",
			inv.Service, inv.Method, l.max, l.max)
	}
	return spi.Errorf(spi.StatusClientTimeout, "activelimit: %s.%s: %d calls in flight (actives=%d) and none finished within the timeout of %v",
		inv.Service, inv.Method, l.max, l.max, l.wait)
}

var (
	_ spi.FilterBuilder = Builder{}
	_ spi.Filter        = (*Filter)(nil)
)
