// Package threadlimit is the provider filter "threadlimit": at most
// "threads" calls run at once on one provider address (one server), over
// every service exported there and every method; a call beyond that is
// refused at once with SERVER_THREADPOOL_EXHAUSTED, like Dubbo's fixed
// thread pool with no queue. Refusals are counted in internal/counters
// (Access.ThreadsRejections: airnode_threads_rejections_total) and logged
// at Warn, rate-bounded per provider address, service and method (the
// first, then one per doubling up to 1,024, then one every 10 s, with
// suppressed and in_burst).
//
// Activated on the provider by the key "threads" (order -10: inside token,
// outside executelimit).
//
//	key      type     unit   default       bounds
//	threads  integer  calls  absent: no cap  1 to 1048576
//
// Exports on the same address share one cap: the Builder keeps one counter
// per address, and the first export's value wins (a later export with
// another value fails to build, naming both). Safe for concurrent use; no
// goroutines.
package threadlimit
