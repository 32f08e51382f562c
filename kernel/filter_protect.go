package kernel

import (
	"time"

	"github.com/airnode/airnode/kernel/directory"
)

// What the directory's empty protection and removal damping ask a
// provider's invoker (directory.NotServing, directory.Draining,
// directory.Prober, directory.Stalled) is forwarded to the end of a per-provider filter
// chain (an activelimit, bench's attempt counter), as AvailabilityEpoch
// is: without it a wrapped provider was kept even when it had said it
// was draining or not serving, or was hung.

// NotServing forwards to the end of the chain (directory.NotServing).
func (f *filterInvoker) NotServing() bool {
	ns, ok := f.Invoker.(directory.NotServing)
	return ok && ns.NotServing()
}

// Draining forwards to the end of the chain (directory.Draining).
func (f *filterInvoker) Draining() bool {
	d, ok := f.Invoker.(directory.Draining)
	return ok && d.Draining()
}

// GoingAway forwards to the end of the chain (goingAwayer): a wrapped
// provider that said go-away is left out as a bare one is.
func (f *filterInvoker) GoingAway() bool { return goingAway(f.Invoker) }

// Probe forwards to the end of the chain (directory.Prober); nothing
// when it is not a Prober.
func (f *filterInvoker) Probe() {
	if p, ok := f.Invoker.(directory.Prober); ok {
		p.Probe()
	}
}

// LastRead forwards to the end of the chain (directory.Prober). When it
// is not a Prober it returns now: an invoker that cannot be probed is
// never taken for a silent one.
func (f *filterInvoker) LastRead() time.Time {
	if p, ok := f.Invoker.(directory.Prober); ok {
		return p.LastRead()
	}
	return time.Now()
}

// Stalled forwards to the end of the chain (directory.Stalled).
func (f *filterInvoker) Stalled(quiet time.Duration) bool {
	st, ok := f.Invoker.(directory.Stalled)
	return ok && st.Stalled(quiet)
}

var (
	_ directory.Stalled    = (*filterInvoker)(nil)
	_ directory.Stalled    = (*remoteInvoker)(nil)
	_ directory.NotServing = (*filterInvoker)(nil)
	_ directory.Draining   = (*filterInvoker)(nil)
	_ directory.Prober     = (*filterInvoker)(nil)
	_ directory.Prober     = (*remoteInvoker)(nil)
	_ directory.Draining   = (*remoteInvoker)(nil)
	_ goingAwayer          = (*filterInvoker)(nil)
	_ goingAwayer          = (*remoteInvoker)(nil)
)
