// Package threadlimit is the provider filter "threadlimit": at most
// "threads" calls run at once on one provider address (one server), over
// every service exported there and every method; a call beyond that is
// refused at once with SERVER_THREADPOOL_EXHAUSTED, like Dubbo's fixed
// thread pool with no queue. Refusals are counted in internal/counters
// (Access.ExecutesRejections, shared with executelimit).
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
