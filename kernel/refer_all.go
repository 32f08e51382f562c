package kernel

import "github.com/airnode/airnode/spi"

// AllProviders returns every provider invoker the reference's directory
// holds now, available or not: Providers' list plus the providers that
// are connecting, reconnecting or ejected (outlier.consecutive). A caller
// that reads each invoker's Stats over a span of time (`airnode bench`'s
// attempts per provider) takes its starting counts here, so that a
// provider unusable at the start still has them. The slice is the
// caller's; never blocks.
func (r *Reference) AllProviders() []spi.Invoker {
	if r.dir == nil {
		return nil
	}
	return append([]spi.Invoker(nil), r.dir.All()...)
}
