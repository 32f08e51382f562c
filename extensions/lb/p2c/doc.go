// Package p2c is the "p2c" load balancer: power of two choices
// (Mitzenmacher) over a peak-EWMA latency estimate (Finagle's and linkerd's
// PeakEwma), as Dubbo 3.2's P2CLoadBalance picks between two providers.
// Each pick draws two distinct providers at random, weighted by effective
// weight (package warmup), and takes the one with the lower
//
//	latency estimate × (calls in flight + 1)
//
// except that when both draws fell on one provider and the second was
// drawn again among the others, the two scores are first divided by the
// candidates' effective weights: with only two providers, both always
// candidates, this is what makes warm-up hold (without it, one at weight 1
// of 100 got half the calls; with it, about 2 %). With equal weights it
// changes nothing. Select says more. Weights set the odds of being a
// candidate, not the shares of the calls, which follow load: two
// providers as fast at weights 100 and 300 split about 40:60 (52–62 % to
// the heavier, in-process on loopback at c=8; random gives 75 %), and a
// provider slower than the other gets less, whatever its weight.
//
// The estimate is this consumer's measured round trip of the provider's
// calls (spi.Stats): a slower sample replaces it at once, faster ones pull
// it down with time constant p2c.decay, and it decays toward 0 while the
// provider is not picked. A failed call counts as its round trip plus the
// reference's timeout, so a failing provider is avoided too. While calls
// are in flight the estimate is at least how long the oldest of them has
// waited (spi.Stats.OldestInFlight): a provider that stalls answers
// nothing, so its estimate would otherwise stay as fast as its last
// answers. An estimate
// no sample has come within half of for p2c.decay / 10 (1 s by default:
// no call, or only calls far faster than it) is stale: the
// provider, if nothing is in flight to it, gets one probe call (it scores
// 0 once), and that call's round trip replaces the estimate. So a
// provider left alone after its calls timed out is judged again about
// every second plus its timeout, and taken back as soon as it answers
// fast (with the decay alone, a provider that hung for 6 s got
// no call for ~40 s); one still failing gets only those probes. Taken
// back, it compares its estimate as pulled toward the other candidate's
// (when higher) by e^(-t/p2c.decay), t since the probe answered
// (PeakEWMA.Rejoining): one unloaded round trip against peers' estimates
// holding the peaks of the load it left them took 1.5–2 × its share for
// seconds (tester67 #7); never above its own estimate before the probe. A
// provider with no answered call yet scores 0 while nothing is in flight
// to it (new providers are tried at once).
//
//	key        type      unit             default  bounds
//	p2c.decay  duration  Go syntax or ms  10s      1ms..10m
//	timeout    duration  Go syntax or ms  1s       > 0 (the kernel's key: the failure penalty)
//
// It also reads the provider keys weight, warmup and timestamp (package
// warmup) to draw the two candidates and weigh a redrawn pair's loads.
// Select is safe for concurrent use, does not block beyond a per-provider
// mutex held for a few arithmetic steps, and does not allocate while the
// provider list is unchanged; it returns nil only when every provider has
// weight 0. It owns no goroutine.
package p2c
