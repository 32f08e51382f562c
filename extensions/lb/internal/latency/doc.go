// Package latency holds what the latency-aware balancers (p2c,
// shortestresponse) share: Tracker, which keeps one latency estimate per
// provider, of a type each balancer chooses, fed from the provider's
// spi.Stats counters each time the balancer reads it (and, for an
// estimate that is a Prober, lets the balancer claim a probe of a
// provider whose estimate is stale), and the penalty a failed call adds
// (the reference's timeout).
//
// Times are offsets on one monotonic clock (Clock). A Tracker is safe for
// concurrent use, owns no goroutine and allocates only when it meets a
// provider for the first time.
package latency
