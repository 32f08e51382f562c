// Package leastactive is the "leastactive" load balancer: the provider with
// the fewest calls in flight (spi.Stats.Active) wins; ties are broken by a
// weighted random pick among the tied providers using their effective
// weights (package warmup). Semantics of Dubbo 2.7.x LeastActiveLoadBalance.
//
// It has no URL keys of its own; it reads the provider keys weight, warmup
// and timestamp (see package warmup) and each invoker's Stats, which the
// kernel's remote invoker keeps. Select is safe for concurrent use and
// lock-free; it does not allocate while the provider list is unchanged (a
// new list is parsed once, see warmup.Cache). It returns nil only when every
// provider has weight 0.
package leastactive
