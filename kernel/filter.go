package kernel

import (
	"context"
	"fmt"

	"github.com/airnode/airnode/kernel/directory"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// filterInvoker runs one filter around the rest of the chain.
type filterInvoker struct {
	spi.Invoker // the rest of the chain: URL, Available, Stats, Close
	filter      spi.Filter
}

func (f *filterInvoker) Invoke(ctx context.Context, inv *spi.Invocation) spi.Result {
	return f.filter.Invoke(ctx, f.Invoker, inv)
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
func chain(filters []spi.Filter, last spi.Invoker) spi.Invoker {
	inv := last
	for i := len(filters) - 1; i >= 0; i-- {
		inv = &filterInvoker{Invoker: inv, filter: filters[i]}
	}
	return inv
}

// filters builds the filter chain of one side for u: the activated set
// edited by u's "filter" key (extension.ActivateFilters), outermost first.
// On the consumer it leaves out the per-provider filters
// (Activation.PerProvider), which invokerFilters builds.
func (n *Node) filters(u spi.URL, side spi.Side) ([]spi.Filter, error) {
	return n.buildFilters(u, side, func(b spi.FilterBuilder) bool {
		return side != spi.Consumer || !b.Activation().PerProvider
	})
}

// invokerFilters builds the consumer's per-provider filters for one
// provider invoker from its merged URL pu, outermost first.
func (n *Node) invokerFilters(pu spi.URL) ([]spi.Filter, error) {
	return n.buildFilters(pu, spi.Consumer, func(b spi.FilterBuilder) bool { return b.Activation().PerProvider })
}

// buildFilters builds the filters of side activated for u that keep
// keeps, outermost first. Its errors name the filter but not the
// component: Export and Refer add "kernel: export KEY" or "kernel: refer
// KEY" ("filter "acme.authz": invalid value "abc" for URL key
// "authz.rate": want an integer", as Explain and serve word it). A plugin
// filter's Build asks its plugin, within the bound of
// pluginrpc.FilterOptions.BuildTimeout.
func (n *Node) buildFilters(u spi.URL, side spi.Side, keep func(spi.FilterBuilder) bool) ([]spi.Filter, error) {
	builders, err := extension.ActivateFilters(n.cat.Filter, u, side, "")
	if err != nil {
		return nil, fmt.Errorf("%s filters: %w", side, err)
	}
	out := make([]spi.Filter, 0, len(builders))
	for _, b := range builders {
		if !keep(b) {
			continue
		}
		f, err := extension.Build(extension.PointFilter, b.Name(), func() (spi.Filter, error) { return b.Build(u) })
		if err != nil {
			return nil, err // `filter "name": ...`, a panic in Build included
		}
		n.useLogger(f)
		out = append(out, f)
	}
	return out, nil
}
