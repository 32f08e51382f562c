package activelimit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
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
	// waiting counts the calls waiting for a slot; while it is above 0
	// every freed slot adds one to freed, so that a call that gave up can
	// say how many calls finished during its wait (the counts cost
	// nothing while no call waits).
	waiting, freed atomic.Int64
}

// release frees the slot of a call that finished.
func (l *limit) release() {
	<-l.slots
	if l.waiting.Load() > 0 {
		l.freed.Add(1)
	}
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
		if finished, err := l.acquire(ctx); err != nil {
			return spi.Result{Err: f.refusal(inv, l, err, finished)}
		}
	}
	defer l.release()
	return next.Invoke(ctx, inv)
}

// errWaited reports a wait that reached the method's timeout.
var errWaited = errors.New("activelimit: waited the whole timeout")

// acquire waits for a slot up to l.wait or ctx's end. When it gives up it
// returns the error and the number of calls that finished meanwhile
// (their slots went to other waiters).
func (l *limit) acquire(ctx context.Context) (finished int64, err error) {
	l.waiting.Add(1)
	defer l.waiting.Add(-1)
	start := l.freed.Load()
	t := time.NewTimer(l.wait)
	defer t.Stop()
	select {
	case l.slots <- struct{}{}:
		return 0, nil
	case <-t.C:
		err = errWaited
	case <-ctx.Done():
		err = ctx.Err()
	}
	return l.freed.Load() - start, err
}

// refusal is the error of a call that waited for a slot and gave up with
// err, while finished calls freed their slots to other waiters:
// "activelimit: t.Act.Work: no slot of actives=1 came free for this call
// within its timeout of 150ms (1 call in flight; 3 finished meanwhile and
// went to other waiters)".
func (f *Filter) refusal(inv *spi.Invocation, l *limit, err error, finished int64) *spi.Error {
	if errors.Is(err, context.Canceled) {
		return spi.Errorf(spi.StatusClientError, "activelimit: %s.%s: cancelled while waiting for one of %d call slots (actives=%d): %w",
			inv.Service, inv.Method, l.max, l.max, err)
	}
	counters.Access.ActivesTimeouts.Inc()
	within := fmt.Sprintf("within its timeout of %v", l.wait)
	if err != errWaited {
		within = "before the caller's deadline"
	}
	inFlight := fmt.Sprintf("%d calls in flight", len(l.slots))
	if len(l.slots) == 1 {
		inFlight = "1 call in flight"
	}
	meanwhile := "none finished meanwhile"
	if finished > 0 {
		meanwhile = fmt.Sprintf("%d finished meanwhile and went to other waiters", finished)
	}
	return spi.Errorf(spi.StatusClientTimeout, "activelimit: %s.%s: no slot of actives=%d came free for this call %s (%s; %s)",
		inv.Service, inv.Method, l.max, within, inFlight, meanwhile)
}

var (
	_ spi.FilterBuilder = Builder{}
	_ spi.Filter        = (*Filter)(nil)
)
