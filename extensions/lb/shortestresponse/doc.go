// Package shortestresponse is the "shortestresponse" load balancer, with
// the shape of Dubbo's ShortestResponseLoadBalance: each provider's
// estimate is
//
//	max(expected response time, 1 ms) × (calls in flight + 1)
//
// and the lowest wins; providers within 1/8 of the lowest tie and are
// picked at random by effective weight (package warmup).
//
// What differs from Dubbo, and why. Dubbo's expected
// time is the mean over a sliding window (slidePeriod, 30 s): thousands of
// old fast samples outvoted new slow ones, so a provider 50 ms slower kept
// every call for 16 s, one that recovered got none for ~47 s, and a
// provider never picked kept its stale mean, so one of four equal
// providers took all the calls. Here the expected time follows the recent
// calls (each answer weighs at least 1/8; one answer raises it by at most
// the larger of it and 1 ms, a bound that widens as e^(2Δt/τ) with the
// pause Δt since the previous answer, so a lone hiccup is ignored — a provider's
// first answer too, which counts at most 1 ms — and a provider
// turning 50 ms slower loses the lead on its second slow answer); while a
// provider has no call in flight and none finishes, it decays toward 0,
// "unknown", with time constant slidePeriod / 30, so a provider left
// alone is tried again (one 50 ms slower than sub-millisecond peers every
// ~4 s by default) and judged on that call. A provider with no answer yet
// is estimated 0 while nothing is in flight to it (it is tried), the
// timeout while something is. The 1 ms floor is Dubbo's whole-millisecond
// granularity: sub-millisecond providers tie, and compare by calls in
// flight alone. A failed call counts as its round trip plus the
// reference's timeout (Dubbo ignores failures), as in p2c.
//
//	key                          type      unit              default  bounds
//	shortestresponse.slidePeriod duration  Go syntax or ms   30s      > 0 (estimates decay with slidePeriod / 30)
//	timeout                      duration  Go syntax or ms   1s       > 0 (the kernel's key: the failure penalty)
//
// For ties it reads the provider keys weight, warmup and timestamp (see
// package warmup). When the reference URL sets slidePeriod, the balancer
// also applies it to the window of every invoker's spi.Stats
// (SetSlidePeriod: the MeanResponse that plugin balancers see), once per
// new provider list. Build validates the keys. Select is safe for
// concurrent use, owns no goroutine, and does not allocate while the
// provider list is unchanged; it returns nil only when every provider has
// weight 0.
package shortestresponse
