package kernel

import "github.com/airnode/airnode/spi"

// ProviderConnections is one listed provider's connections
// (Reference.ProviderConnections).
type ProviderConnections struct {
	// Provider is the directory's invoker for the provider's registry
	// entry: a provider that registered again (a restart) is a new one.
	Provider spi.Invoker
	// Addr is the provider's host:port.
	Addr string
	// Up of Asked connections (URL key connections, default 1) are up
	// and answered their first ping, as Reference.Connections counts.
	Up, Asked int
	// Leaving says that one of its channels announced the provider's
	// shutdown (Dubbo's read-only event, or the draining event): its
	// connections are going away by design, not refused.
	Leaving bool
	// Err is why one of its connections that is not up failed its last
	// attempt (CHANNEL_INACTIVE "cannot connect to provider ...: ..."):
	// a TLS verification failure, a refused connection; nil when all are
	// up or none has failed an attempt yet.
	Err error
	// Started is the provider's start, ms since the epoch on its clock,
	// that its hello gave on its up connections (spi.ProviderStart,
	// exchange.KeyHelloTimestamp): the process a connection reached. A
	// different value on the same address is a different process (a
	// restart); 0 with none up, or from a provider that sends none.
	Started int64
}

// ProviderConnections returns, for each provider the directory lists now,
// its connections up and asked (Connections counts their sums) and whether
// it announced its shutdown. Safe for concurrent use.
func (r *Reference) ProviderConnections() []ProviderConnections {
	var out []ProviderConnections
	for _, inv := range r.dir.All() {
		ri, ok := remoteOf(inv)
		if !ok {
			continue
		}
		p := ProviderConnections{Provider: inv, Addr: ri.addr, Asked: len(ri.conns), Leaving: ri.Draining(), Started: ri.ProviderStarted()}
		for _, c := range ri.conns {
			if c.ready() {
				p.Up++
			} else if st := c.state.Load(); st != nil && st.ch == nil && st.err != nil && p.Err == nil {
				p.Err = st.err
			}
			if st := c.state.Load(); st != nil && st.ch != nil {
				if ro, ok := st.ch.(interface{ ReadOnly() bool }); ok && ro.ReadOnly() {
					p.Leaving = true
				}
			}
		}
		out = append(out, p)
	}
	return out
}
