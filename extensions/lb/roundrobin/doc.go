// Package roundrobin is the "roundrobin" load balancer: smooth weighted
// round robin (nginx's algorithm, as in Dubbo 2.7.x RoundRobinLoadBalance)
// over the providers' effective weights (package warmup). Weights 5:1:1
// give A A B A C A A, exactly 5/1/1 per cycle.
//
// It has no URL keys of its own; it reads the provider keys weight, warmup
// and timestamp (see package warmup). State is kept per service and method;
// the state of a provider that is no longer listed is dropped after
// RecycleAfter (1 min), at the next change of the list. Select is
// safe for concurrent use: it holds one short per-method lock so that counts
// stay exact under concurrency, and it does not allocate once every provider
// of the list has been seen.
package roundrobin
