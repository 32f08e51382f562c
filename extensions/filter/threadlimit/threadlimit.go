package threadlimit

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/airnode/airnode/extensions/filter/internal/refusallog"
	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/spi"
)

// Name is the extension name of this filter.
const Name = "threadlimit"

// Key is the URL key that activates the filter and holds the cap.
const Key = "threads"

// MaxThreads bounds the "threads" value.
const MaxThreads = 1 << 20

// Builder builds threadlimit filters sharing one cap per provider address.
// The zero value is ready to use; it must not be copied after first use.
type Builder struct {
	mu   sync.Mutex
	caps map[string]*limit // by provider address
}

// limit is one address's limit and count of running calls.
type limit struct {
	max     int64
	active  atomic.Int64
	refused atomic.Int64 // calls refused since the limit was made
}

// refusals bounds the refusal lines (refusallog).
var refusals = refusallog.New(Name)

// Name returns "threadlimit".
func (*Builder) Name() string { return Name }

// Activation switches the filter on for providers whose URL has "threads".
func (*Builder) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Provider}, Key: Key, Order: -10}
}

// Build returns the filter of u's address, sharing the cap of earlier
// exports on that address. Errors: "threads" not an integer from 1 to
// MaxThreads, or different from the value already in force there.
func (b *Builder) Build(u spi.URL) (spi.Filter, error) {
	n, err := u.MethodIntIn("", Key, 0, 1, MaxThreads, "")
	if err == nil && n == 0 { // absent: the filter is activated by the key, so Build sees it
		err = &spi.ParamError{Key: Key, Value: "", Want: spi.IntRangeWant(1, MaxThreads, "")}
	}
	if err != nil {
		return nil, fmt.Errorf("threadlimit: %w", err)
	}
	addr := u.Address()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.caps == nil {
		b.caps = map[string]*limit{}
	}
	c := b.caps[addr]
	switch {
	case c == nil:
		c = &limit{max: n}
		b.caps[addr] = c
	case c.max != n:
		return nil, fmt.Errorf("threadlimit: %s=%d for %s, but %s already has %s=%d for its other services", Key, n, u.ServiceKey(), addr, Key, c.max)
	}
	return &Filter{lim: c, addr: addr}, nil
}

// Filter refuses calls beyond its address's cap.
type Filter struct {
	lim  *limit
	addr string
	log  *slog.Logger // the node's (UseLogger); nil: slog.Default()
}

// UseLogger makes the filter log its refusals to l, its node's logger
// (spi.LoggerUser: the kernel calls it right after Build).
func (f *Filter) UseLogger(l *slog.Logger) { f.log = l }

// Invoke runs the call if fewer than the cap are running on the address,
// and otherwise returns SERVER_THREADPOOL_EXHAUSTED without calling next,
// counts the refusal (counters.Access.ThreadsRejections) and logs it at
// Warn, rate-bounded (refusallog).
func (f *Filter) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	if f.lim.active.Add(1) > f.lim.max {
		f.lim.active.Add(-1)
		counters.Access.ThreadsRejections.Inc()
		refusals.Refused(f.log, f.addr, Key, f.lim.max, inv, f.lim.refused.Add(1))
		return spi.Result{Err: spi.Errorf(spi.StatusServerThreadpoolExhausted,
			"threadlimit: provider %s already runs %s (threads=%d); %s.%s refused", f.addr, refusallog.Calls(f.lim.max), f.lim.max, inv.Service, inv.Method)}
	}
	defer f.lim.active.Add(-1)
	return next.Invoke(ctx, inv)
}

var (
	_ spi.FilterBuilder = (*Builder)(nil)
	_ spi.Filter        = (*Filter)(nil)
	_ spi.LoggerUser    = (*Filter)(nil)
)
