package spi

// AffinityLoadBalance is an optional interface of a LoadBalance whose pick
// for a call depends on the whole set of providers, such as consistent
// hashing, where one key must reach the same provider from every consumer
// process (cache or shard affinity).
//
// When Affinity reports true, the kernel holds a fresh reference's calls
// until the first connection attempt to every provider the directory
// lists has ended (each is bounded by connect.timeout; the call's ctx
// bounds the wait too), and only then gives the balancer its list: the
// providers that answered, without the ones known to be down. Without it
// the first calls would be picked among whichever connections happened
// to be up, so a key would reach different providers from different
// processes. Dubbo gets the same by connecting every provider at refer.
// Providers that join later do not hold calls. Affinity is called on the
// call path until the reference has settled, so it must be cheap.
type AffinityLoadBalance interface {
	LoadBalance
	Affinity() bool
}
