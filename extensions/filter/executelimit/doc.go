// Package executelimit is the provider filter "executelimit": at most
// "executes" calls of each method run at once on one export; a call beyond
// that is refused at once with SERVER_THREADPOOL_EXHAUSTED (no queue), as
// Dubbo's ExecuteLimitFilter does. Refusals are counted in
// internal/counters (Access.ExecutesRejections:
// airnode_executes_rejections_total) and logged at Warn, rate-bounded per
// provider address, service and method (the first, then one per doubling
// up to 1,024, then one every 10 s, with suppressed and in_burst).
//
// Activated on the provider by the key "executes" (order 0), at service
// level or for some method ("methods.Sleep.executes=1" or Dubbo's
// "Sleep.executes=1": spi.Activation.PerMethod).
//
//	key                      type     unit   default      bounds
//	executes                 integer  calls  0 (no limit)  0 to 1048576
//	methods.<m>.executes     integer  calls  executes      0 to 1048576; 0 lifts the limit for <m>
//
// The limit counts per method, not per service: executes=2 lets two Sleep
// and two Echo calls run together. The kernel activates filters per
// service, so a method-level key alone does not switch the filter on:
// write executes=0&methods.Sleep.executes=2 (or filter=executelimit). Safe for concurrent use; no goroutines.
package executelimit
