package kernel

import "github.com/airnode/airnode/spi"

// Connections returns how many connections the reference's listed
// providers should hold (asked: URL key connections, default 1, per
// provider) and how many of them are up now, having answered their first
// ping (up). A provider that accepts fewer connections than asked (out of
// file descriptors, say) leaves up < asked: the others keep redialing
// (reconnect.backoff). Safe for concurrent use.
func (r *Reference) Connections() (up, asked int) {
	for _, p := range r.ProviderConnections() {
		up, asked = up+p.Up, asked+p.Asked
	}
	return up, asked
}

// remoteOf returns the remote invoker at the end of inv's per-provider
// filter chain (activelimit, bench's attempt counter), if inv is one of
// the reference's provider invokers.
func remoteOf(inv spi.Invoker) (*remoteInvoker, bool) {
	for {
		f, ok := inv.(*filterInvoker)
		if !ok {
			break
		}
		inv = f.Invoker
	}
	ri, ok := inv.(*remoteInvoker)
	return ri, ok
}
