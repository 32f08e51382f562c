// Package forking is the "forking" cluster: the same call on several
// providers at once; the first success wins and the other calls' contexts
// are cancelled (Dubbo's ForkingClusterInvoker), for latency-critical reads.
//
//	key    type  unit  default  bounds
//	forks  int   -     2        1..100 parallel calls; method-level allowed
//
// A method-level key is "methods.<m>.<key>", or Dubbo's "<m>.<key>" for m
// in the consumer URL's "methods" or, when it has none, for m an exported
// method name ("Slow.forks=1"; "heartbeat.forks" is no method's), read
// at Build as spi.URL.MethodParam and the kernel read "<m>.timeout".
// When the reference sets no forks for a method, the provider's is the
// default, as failover's retries: that of the provider the balancer picks
// first (its invoker's URL), then 2. A direct reference keeps its own.
//
// Providers are chosen by the balancer, each at most once; fewer are used
// when fewer have a positive weight. Each fork gets its own copy of the
// invocation (attachments copied; a non-nil Reply gets a fresh value of the
// same type, copied into the caller's Reply from the winner), so forks never
// race. Invoke returns at the first success, or when every fork has failed
// with the last failure's status and a message that counts the forks,
// names their providers and says whose status it has, then lists each
// fork on a line of its own, as failover lists its attempts ("2 of 2
// forks failed on [A, B]; the status is fork 2's, the last to fail:",
// "  fork 1, A: SERVER_TIMEOUT: ..."), except that a fork that may have
// run (clusterkit.DidNotRun false) wins over later ones that did not:
// "...; the status is fork 1's, the last to fail that may have run (1
// other fork did not run):"; forks still running finish as soon as their
// invokers honour the cancelled context and never block. Safe for concurrent
// use.
package forking
