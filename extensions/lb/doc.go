// Package lb groups airnode's bundled load balancers, one package each, all
// implementing spi.LoadBalanceBuilder and running spitest.TestLoadBalance:
//
//	random            weighted random (the default)
//	roundrobin        smooth weighted round robin
//	leastactive       fewest calls in flight, weighted random among ties
//	consistenthash    hash ring over the provider addresses
//	shortestresponse  lowest recent response time × (active + 1), ties within 1/8 by weight
//	p2c               the better of two random picks by peak-EWMA latency × (active + 1)
//
// All but consistenthash weigh providers with package warmup (p2c to draw
// its two candidates). A balancer returns nil only when every provider has
// weight 0; the clusters turn that into SERVICE_NOT_FOUND. BenchmarkSelect in this directory measures a pick
// with 10 and 1,000 providers.
//
// Cost per pick over an unchanged list: the list is
// recognised by one memcmp (warmup.SameList) and its weights come from
// warmup.Cache, computed again only when one changes; random and p2c
// pick by binary search of the prefix sums, O(log n); roundrobin is O(1)
// while every weight is equal and O(n) otherwise (nginx's smooth order
// adds every provider's weight on each pick); leastactive and
// shortestresponse read every provider's active count (and estimate) on
// each pick, O(n) in that scan only; consistenthash walks its ring,
// O(log n).
package lb
