// Package cluster groups airnode's bundled fault-tolerance strategies, one
// package each: failover (the default), failfast, failsafe and forking. They
// implement spi.ClusterBuilder; every one runs spitest.TestCluster.
//
// Contract shared by all four: an empty directory, or one whose providers all
// have weight 0, is an *spi.Error with StatusServiceNotFound
// "no provider available for <service key> (registry: <registry>)"; a
// balancer returning nil while some provider has a weight gets the same
// status naming the balancer ("balancer acme.p2c returned no provider out
// of 2"). A balancer that is an spi.ContextLoadBalance (a plugin's) picks
// under the call's ctx; its error (it could not pick in time) is the
// call's result and is not retried. Clusters
// never call spi.Stats Begin/End: the kernel's remote invoker records every
// provider call, so a retry or a fork counts once per provider call. A
// cluster that hides a failure from its caller (failsafe) returns it in
// spi.Result.Swallowed, for the consumer filters above it (accesslog). A
// cluster that logs takes its node's logger (spi.LoggerUser).
package cluster
