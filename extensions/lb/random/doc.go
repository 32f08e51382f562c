// Package random is the "random" load balancer, airnode's default: a
// weighted random pick over the providers' effective weights (package
// warmup), uniform when all weights are equal. Semantics of Dubbo 2.7.x
// RandomLoadBalance.
//
// It has no URL keys of its own; it reads the provider keys weight, warmup
// and timestamp (see package warmup). Select is safe for concurrent use and
// lock-free; it does not allocate while the provider list is unchanged (a
// new list is parsed once, see warmup.Cache). It returns nil only when every
// provider has weight 0.
package random
