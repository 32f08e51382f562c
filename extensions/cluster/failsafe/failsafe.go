package failsafe

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/airnode/airnode/extensions/cluster/internal/clusterkit"
	"github.com/airnode/airnode/internal/ratelog"
	"github.com/airnode/airnode/spi"
)

// limits bounds the swallowed-failure lines per base logger, as the
// exchange and the kernel bound their repeated lines (internal/ratelog):
// per class (service, method, provider address and status), the first
// line of a burst, then one each time its count doubles up to 1,024, then
// one every 10 s, each after the first with suppressed (left out since
// the line before) and in_burst; a class left out and then quiet gets a
// summary line 10 s after its last line. One provider answering
// SERVER_ERROR to 8 callers for 3 s: 11 lines, not 56,897.
var limits = ratelog.Limiters{SummaryAttrs: []any{"component", "cluster", "cluster", Name}}

// swallowedMsg is the swallowed-failure line's message.
const swallowedMsg = "call failed, returning the zero result"

// Name is the extension name, the value of the URL key "cluster".
const Name = "failsafe"

// Option configures a Builder (behaviour only).
type Option func(*Builder)

// WithLogger makes the clusters log swallowed failures to l, whatever
// node they serve. Without it a cluster logs to its node's logger
// (kernel.WithLogger, passed by spi.LoggerUser), or slog.Default() when
// it is used outside a node.
func WithLogger(l *slog.Logger) Option { return func(b *Builder) { b.log = l } }

// Builder builds failsafe clusters. The zero value is ready to use.
type Builder struct{ log *slog.Logger }

// New returns a Builder configured by opts.
func New(opts ...Option) Builder {
	var b Builder
	for _, o := range opts {
		o(&b)
	}
	return b
}

// Name returns "failsafe".
func (Builder) Name() string { return Name }

// Build returns the cluster; failsafe has no keys, so it never fails.
func (b Builder) Build(spi.URL) (spi.Cluster, error) {
	return &Cluster{log: b.log, own: b.log != nil}, nil
}

// Cluster is a failsafe cluster.
type Cluster struct {
	log *slog.Logger
	own bool // log came from WithLogger: UseLogger leaves it
}

// UseLogger makes the cluster log to l, its node's logger, unless the
// Builder was given one by WithLogger (spi.LoggerUser: the kernel calls it
// right after Build).
func (c *Cluster) UseLogger(l *slog.Logger) {
	if !c.own {
		c.log = l
	}
}

// Invoke calls the provider lb picks once. A business error (Business:
// the method ran and returned an error) is returned unchanged, as any
// cluster returns it. Any other failure is logged at warn level with the
// service, method, provider and error, rate-bounded per service, method,
// provider and status (limits), and a zero Result is returned whose
// Swallowed is the failure (filters above the cluster, such as the
// consumer's accesslog, report it).
func (c *Cluster) Invoke(ctx context.Context, inv *spi.Invocation, dir spi.Directory, lb spi.LoadBalance) spi.Result {
	list := dir.List(inv)
	if len(list) == 0 {
		return spi.Result{Err: clusterkit.NoProvider(inv, dir, "")}
	}
	x, err := clusterkit.Select(ctx, lb, dir, list, inv)
	if err != nil {
		return spi.Result{Err: err} // as no provider: nothing was called
	}
	if x == nil {
		return spi.Result{Err: clusterkit.NoneSelected(inv, dir, lb, list)}
	}
	r := x.Invoke(ctx, inv)
	if r.Err == nil || Business(r.Err) {
		return r
	}
	l := c.log
	if l == nil {
		l = slog.Default()
	}
	if l.Enabled(ctx, slog.LevelWarn) {
		addr, status := x.URL().Address(), spi.StatusOf(r.Err).String()
		class := inv.Service + " " + inv.Method + " " + addr + " " + status
		if ok, suppressed, n := limits.For(l).Event(class, time.Now(), slog.LevelWarn, swallowedMsg); ok {
			// component leads the attributes rather than a l.With:
			// the limiter is per node logger (limits.For(l))
			l.Warn(swallowedMsg, ratelog.Attrs([]any{"component", "cluster", "cluster", Name, "service", inv.Service, "method", inv.Method,
				"provider", addr, "status", status, "err", r.Err}, suppressed, n)...)
		}
	}
	return spi.Result{Swallowed: r.Err, ProviderAddr: r.ProviderAddr, RequestID: r.RequestID, Local: r.Local}
}

// Business reports whether err is a business error, which failsafe
// returns to its caller rather than swallow: SERVICE_ERROR (the method ran
// and returned an error) or an error carrying a *spi.BizError, whatever
// its status. Dubbo's FailsafeClusterInvoker swallows only RpcExceptions;
// a business exception travels in the AppResponse and reaches the caller.
func Business(err error) bool {
	if spi.StatusOf(err) == spi.StatusServiceError {
		return true
	}
	var be *spi.BizError
	return errors.As(err, &be)
}

// Interface guards.
var (
	_ spi.ClusterBuilder = Builder{}
	_ spi.Cluster        = (*Cluster)(nil)
	_ spi.LoggerUser     = (*Cluster)(nil)
)
