// Package activelimit is the consumer filter "activelimit": at most
// "actives" calls of each method of one reference are in flight at once; a
// further call waits for a slot up to the method's "timeout" (or the
// caller's deadline, whichever is first) and then fails with
// CLIENT_TIMEOUT, as Dubbo's ActiveLimitFilter does. Give-ups are counted
// in internal/counters (Access.ActivesTimeouts).
//
// Activated on the consumer by the key "actives" (order 0).
//
//	key                    type      unit            default       bounds
//	actives                integer   calls           0 (no limit)  0 to 1048576
//	methods.<m>.actives    integer   calls           actives       0 to 1048576; 0 lifts the limit for <m>
//	timeout                duration  ms or Go syntax 1000ms        longest wait for a slot (method level first)
//
// Consumer filters run above the cluster, so the limit is per method of
// the reference, over all its providers, not per provider as in Dubbo
// (that needs invoker-level consumer filters in the kernel). A call that
// got its slot keeps the whole timeout for the remote call. Safe for
// concurrent use; no goroutines.
package activelimit
