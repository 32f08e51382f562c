package executelimit

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/airnode/airnode/extensions/filter/internal/limitkey"
	"github.com/airnode/airnode/extensions/filter/internal/refusallog"
	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/spi"
)

// Name is the extension name of this filter.
const Name = "executelimit"

// Key is the URL key that activates the filter and holds the limit.
const Key = "executes"

// MaxExecutes bounds the "executes" value.
const MaxExecutes = 1 << 20

// Builder builds executelimit filters. The zero value is ready to use.
type Builder struct{}

// Name returns "executelimit".
func (Builder) Name() string { return Name }

// Activation switches the filter on for providers whose URL has "executes",
// at service level or for some method (spi.Activation.PerMethod).
func (Builder) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Provider}, Key: Key, Order: 0, PerMethod: true}
}

// Build checks every "executes" key of u (service and method level) and
// returns the filter. Pure.
func (Builder) Build(u spi.URL) (spi.Filter, error) {
	if err := limitkey.Check(u, Key, MaxExecutes); err != nil {
		return nil, fmt.Errorf("executelimit: %w", err)
	}
	return &Filter{url: u}, nil
}

// Filter refuses calls of a method beyond its limit.
type Filter struct {
	url     spi.URL
	methods sync.Map     // method -> *limit (nil pointer: no limit)
	log     *slog.Logger // the node's (UseLogger); nil: slog.Default()
}

// UseLogger makes the filter log its refusals to l, its node's logger
// (spi.LoggerUser: the kernel calls it right after Build).
func (f *Filter) UseLogger(l *slog.Logger) { f.log = l }

// refusals bounds the refusal lines (refusallog).
var refusals = refusallog.New(Name)

// limit is one method's limit and count of running calls.
type limit struct {
	max     int64
	active  atomic.Int64
	refused atomic.Int64 // calls refused since the limit was made
}

func (f *Filter) limitFor(method string) *limit {
	if v, ok := f.methods.Load(method); ok {
		return v.(*limit)
	}
	n, _ := f.url.MethodInt(method, Key, 0) // checked in Build
	var l *limit
	if n > 0 {
		l = &limit{max: n}
	}
	v, _ := f.methods.LoadOrStore(method, l)
	return v.(*limit)
}

// Invoke runs the call if fewer than the method's limit are running, and
// otherwise returns SERVER_THREADPOOL_EXHAUSTED without calling next,
// counts the refusal (counters.Access.ExecutesRejections) and logs it at
// Warn, rate-bounded (refusallog).
func (f *Filter) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	l := f.limitFor(inv.Method)
	if l == nil {
		return next.Invoke(ctx, inv)
	}
	if l.active.Add(1) > l.max {
		l.active.Add(-1)
		counters.Access.ExecutesRejections.Inc()
		refusals.Refused(f.log, f.url.Address(), Key, l.max, inv, l.refused.Add(1))
		return spi.Result{Err: spi.Errorf(spi.StatusServerThreadpoolExhausted,
			"executelimit: %s.%s already runs %s (executes=%d); call refused", inv.Service, inv.Method, refusallog.Calls(l.max), l.max)}
	}
	defer l.active.Add(-1)
	return next.Invoke(ctx, inv)
}

var (
	_ spi.FilterBuilder = Builder{}
	_ spi.Filter        = (*Filter)(nil)
	_ spi.LoggerUser    = (*Filter)(nil)
)
