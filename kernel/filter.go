package kernel

import (
	"context"
	"fmt"

	"github.com/airnode/airnode/kernel/directory"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// chainFilter is a built filter with the name its builder has in the
// catalog (its extension name: bundled, Go-registered or plugin), which
// the errors of the filter's calls name; "" for the kernel's own.
type chainFilter struct {
	name string
	spi.Filter
}

// filterInvoker runs one filter around the rest of the chain.
type filterInvoker struct {
	spi.Invoker // the rest of the chain: URL, Available, Stats, Close
	filter      chainFilter
	// pos is, in a provider chain, the filter's place in it, 1 for the
	// outermost: a call entering the filter records it (callCtx.reached),
	// so that serve names the filter that refused a call. 0 on the
	// consumer, where a plain error the filter returns is typed here
	// (consumerFilterError).
	pos int32
}

func (f *filterInvoker) Invoke(ctx context.Context, inv *spi.Invocation) spi.Result {
	if f.pos > 0 {
		reach(ctx, f.pos)
		return f.filter.Invoke(ctx, f.Invoker, inv)
	}
	res := f.filter.Invoke(ctx, f.Invoker, inv)
	if res.Err != nil && f.filter.name != "" {
		res.Err = consumerFilterError(f.filter.name, inv, res.Err)
	}
	return res
}

// consumerFilterError returns err, the error consumer filter name
// returned for inv, typed: a plain error (no *spi.Error in its chain) is
// the filter's own, since what comes from below the filters is typed
// (clusterInvoker, remoteInvoker), so it becomes CLIENT_ERROR naming the
// filter, "kernel: call shop.Cart.Add: consumer filter "quota": quota
// exceeded", with err as its Cause. An error carrying an *spi.Error
// keeps the status the filter chose, as spi.FromError gives it: a
// wrapper (fmt.Errorf("auth: %w", e)) becomes an *spi.Error reading
// "BAD_REQUEST: auth: no tenant", the status first and once, err its
// Cause; so a per-provider filter's refusal reads the same in a
// cluster's line per attempt ("attempt 1, ADDR: BAD_REQUEST: auth: no
// tenant") as alone.
func consumerFilterError(name string, inv *spi.Invocation, err error) error {
	if e, ok := spi.FromError(err); ok {
		return e
	}
	return &spi.Error{Status: spi.StatusClientError, Cause: err,
		Message: fmt.Sprintf("kernel: call %s.%s: consumer filter %q: %v", inv.Service, inv.Method, name, err)}
}

// typed returns err with a status: a plain error (a cluster's or a
// balancer's, no *spi.Error in its chain) becomes CLIENT_ERROR, the
// status spi.StatusOf gives it, with its text and as its Cause, so that
// the consumer filters above tell it from one of their own
// (consumerFilterError); an error wrapping an *spi.Error becomes one as
// spi.FromError gives it.
func typed(err error) error {
	if e, ok := spi.FromError(err); ok {
		return e
	}
	return &spi.Error{Status: spi.StatusClientError, Message: err.Error(), Cause: err}
}

// AvailabilityEpoch forwards to the end of the chain (directory.Watched);
// nil when it is not watched.
func (f *filterInvoker) AvailabilityEpoch() *directory.Epoch {
	if w, ok := f.Invoker.(directory.Watched); ok {
		return w.AvailabilityEpoch()
	}
	return nil
}

// ProviderStarted forwards to the end of the chain (spi.ProviderStart);
// 0 when it does not know.
func (f *filterInvoker) ProviderStarted() int64 {
	if p, ok := f.Invoker.(spi.ProviderStart); ok {
		return p.ProviderStarted()
	}
	return 0
}

// StartChanges forwards to the end of the chain (spi.ProviderStart); nil
// (never changes) when it does not know.
func (f *filterInvoker) StartChanges() interface{ Load() uint64 } {
	if p, ok := f.Invoker.(spi.ProviderStart); ok {
		return p.StartChanges()
	}
	return nil
}

// connecting forwards to the end of the chain (see connector).
func (f *filterInvoker) connecting() bool { return isConnecting(f.Invoker) }

// redialNow forwards to the end of the chain (see connector).
func (f *filterInvoker) redialNow() bool {
	c, ok := f.Invoker.(connector)
	return ok && c.redialNow()
}

// connector is an invoker whose connections can say whether an attempt
// to connect is in progress (the first, or one a call asked for), and be
// asked to redial at once (remoteInvoker, and filterInvoker around it).
type connector interface {
	connecting() bool
	redialNow() bool
}

// isConnecting reports whether inv is still making its first connection.
func isConnecting(inv spi.Invoker) bool {
	c, ok := inv.(connector)
	return ok && c.connecting()
}

// chain wraps last with filters, the first filter outermost (it runs
// first), as Dubbo's ProtocolFilterWrapper builds its chain.
// A consumer chain's last returns typed errors (see typed).
func chain(filters []chainFilter, last spi.Invoker) spi.Invoker {
	inv := last
	for i := len(filters) - 1; i >= 0; i-- {
		inv = &filterInvoker{Invoker: inv, filter: filters[i]}
	}
	return inv
}

// providerChain is chain for a provider: each filter records that a call
// entered it (filterInvoker.pos), and last, the service's invoker, that
// the call reached it (ranInvoker), so that serve names the filter that
// answered a call without running the method (filterRefusal).
func providerChain(filters []chainFilter, last spi.Invoker) spi.Invoker {
	var inv spi.Invoker = ranInvoker{Invoker: last, pos: int32(len(filters)) + 1}
	for i := len(filters) - 1; i >= 0; i-- {
		inv = &filterInvoker{Invoker: inv, filter: filters[i], pos: int32(i) + 1}
	}
	return inv
}

// filters builds the filter chain of one side for u: the activated set
// edited by u's "filter" key (extension.ActivateFilters), outermost first.
// On the consumer it leaves out the per-provider filters
// (Activation.PerProvider), which invokerFilters builds.
func (n *Node) filters(u spi.URL, side spi.Side) ([]chainFilter, error) {
	return n.buildFilters(u, side, func(b spi.FilterBuilder) bool {
		return side != spi.Consumer || !b.Activation().PerProvider
	})
}

// invokerFilters builds the consumer's per-provider filters for one
// provider invoker from its merged URL pu, outermost first.
func (n *Node) invokerFilters(pu spi.URL) ([]chainFilter, error) {
	return n.buildFilters(pu, spi.Consumer, func(b spi.FilterBuilder) bool { return b.Activation().PerProvider })
}

// buildFilters builds the filters of side activated for u that keep
// keeps, outermost first. Its errors name the filter but not the
// component: Export and Refer add "kernel: export KEY" or "kernel: refer
// KEY" ("filter "acme.authz": invalid value "abc" for URL key
// "authz.rate": want an integer", as Explain and serve word it). A plugin
// filter's Build asks its plugin, within the bound of
// pluginrpc.FilterOptions.BuildTimeout.
func (n *Node) buildFilters(u spi.URL, side spi.Side, keep func(spi.FilterBuilder) bool) ([]chainFilter, error) {
	builders, err := extension.ActivateFilters(n.cat.Filter, u, side, "")
	if err != nil {
		return nil, fmt.Errorf("%s filters: %w", side, err)
	}
	out := make([]chainFilter, 0, len(builders))
	for _, b := range builders {
		if !keep(b) {
			continue
		}
		f, err := extension.Build(extension.PointFilter, b.Name(), func() (spi.Filter, error) { return b.Build(u) })
		if err != nil {
			return nil, err // `filter "name": ...`, a panic in Build included
		}
		n.useLogger(f)
		out = append(out, chainFilter{name: b.Name(), Filter: f})
	}
	return out, nil
}
