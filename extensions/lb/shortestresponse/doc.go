// Package shortestresponse is the "shortestresponse" load balancer: the
// provider with the lowest estimated response time, mean successful
// response time over the sliding window × (active calls + 1), wins; ties
// (including providers with no sample yet, estimated 0) are broken by a
// weighted random pick using effective weights (package warmup). Semantics of
// Dubbo's ShortestResponseLoadBalance (2.7.7+, sliding window from 3.x).
//
//	key                          type      unit              default  bounds
//	shortestresponse.slidePeriod duration  Go syntax or ms   30s      > 0
//
// For ties it reads the provider keys weight, warmup and timestamp (see
// package warmup).
//
// The window is the one spi.Stats keeps for each invoker; when the reference
// URL sets the key, the balancer applies it to the Stats of every invoker it
// is given (spi.Stats.SetSlidePeriod, once per new provider list).
// Build validates the key. Select is safe for concurrent use and does not
// allocate while the provider list is unchanged; it returns nil only when
// every provider has weight 0.
package shortestresponse
