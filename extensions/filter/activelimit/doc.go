// Package activelimit is the consumer filter "activelimit": at most
// "actives" calls of each method are in flight at once to each provider of
// a reference; a
// further call waits for a slot up to the method's "timeout" (or the
// caller's deadline, whichever is first) and then fails with
// CLIENT_TIMEOUT, as Dubbo's ActiveLimitFilter does. Give-ups are counted
// in internal/counters (Access.ActivesTimeouts).
//
// Activated on the consumer by the key "actives" (order 0), at service
// level or for some method ("methods.Sleep.actives=1" or "Sleep.actives=1":
// spi.Activation.PerMethod), per provider
// (Activation.PerProvider): the kernel builds one filter for each provider
// invoker, below the cluster and the balancer, from the provider's merged
// URL, as Dubbo's ActiveLimitFilter counts per provider.
//
//	key                    type      unit            default       bounds
//	actives                integer   calls           0 (no limit)  0 to 1048576
//	methods.<m>.actives    integer   calls           actives       0 to 1048576; 0 lifts the limit for <m>
//	timeout                duration  ms or Go syntax 1000ms        longest wait for a slot (method level first)
//
// A call that got its slot keeps the whole timeout for the remote call;
// a CLIENT_TIMEOUT here means the request was never sent, so failover may
// try another provider. Safe for
// concurrent use; no goroutines.
package activelimit
