// Package lb groups airnode's bundled load balancers, one package each, all
// implementing spi.LoadBalanceBuilder and running spitest.TestLoadBalance:
//
//	random            weighted random (the default)
//	roundrobin        smooth weighted round robin
//	leastactive       fewest calls in flight, weighted random among ties
//	consistenthash    hash ring over the provider addresses
//	shortestresponse  lowest mean response × (active + 1)
//	p2c               the better of two random picks by peak-EWMA latency × (active + 1)
//
// All but consistenthash weigh providers with package warmup (p2c to draw
// its two candidates). A balancer returns nil only when every provider has
// weight 0; the clusters turn that into SERVICE_NOT_FOUND. BenchmarkSelect in this directory measures a pick
// with 10 and 1,000 providers.
package lb
