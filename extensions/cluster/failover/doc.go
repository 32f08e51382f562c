// Package failover is the "failover" cluster, airnode's default: on a
// failure that certainly left the request unprocessed it retries on another
// provider (Dubbo's FailoverClusterInvoker, made safe for non-idempotent
// methods).
//
//	key                       type  unit  default  bounds
//	retries                   int   -     2        0..100 extra attempts; method-level allowed
//	methods.<m>.idempotent    bool  -     false    also "idempotent" service-wide, "<m>.idempotent"
//
// A method-level key is "methods.<m>.<key>", or Dubbo's "<m>.<key>" for m
// in the consumer URL's "methods" or, when it has none, for m an exported
// method name ("Slow.retries=0"; "heartbeat.retries" is no method's), read
// at Build as spi.URL.MethodParam and the kernel read "<m>.timeout".
//
// Retried: connection errors before the request was written (dial errors),
// CHANNEL_INACTIVE before the request was sent, CLIENT_TIMEOUT (never fully
// written), and the provider's refusals SERVER_THREADPOOL_EXHAUSTED and
// SERVICE_NOT_FOUND (the handler never ran; a kernel provider whose method
// returned one of these statuses answers SERVICE_ERROR instead, since the
// method did run). SERVER_TIMEOUT and
// CHANNEL_INACTIVE after the request was sent (spi.ErrRequestSent: the
// connection died while the provider may have been running it, or the
// provider answered CHANNEL_INACTIVE: its service plugin died) are retried
// only for idempotent methods; nothing else is (SERVICE_ERROR never).
//
// Each retry lists the directory again and prefers a provider not tried
// yet. A tried one is asked again only if its failure may change: never
// after a refused dial or a certificate that failed verification (Repeats),
// so one such provider makes one attempt, "failed after 1 attempt on
// [ADDR]", nor after SERVICE_NOT_FOUND. A full pool (SERVER_THREADPOOL_EXHAUSTED) may
// drain: once every provider has been tried, the next attempt waits a
// jittered exponential backoff first (Backoff: 10–20 ms, doubling, at most
// 100–200 ms), never past the call's deadline. A done context stops
// retrying, backoff included. Safe for concurrent use; owns no goroutine.
package failover
