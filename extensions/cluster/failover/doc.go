// Package failover is the "failover" cluster, airnode's default: on a
// failure that certainly left the request unprocessed it retries on another
// provider (Dubbo's FailoverClusterInvoker, made safe for non-idempotent
// methods).
//
//	key                       type  unit  default  bounds
//	retries                   int   -     2        0..100 extra attempts; method-level allowed
//	methods.<m>.idempotent    bool  -     false    also "idempotent" service-wide, "<m>.idempotent"
//	retry.tokens              int   token 0        0..1000; 0: no retry budget; service level
//	retry.ratio               dec   token 0.1      0.001..1; tokens a success gives back
//
// Retry budget (gRPC's retry throttling, proposal A6 "gRPC Retry
// Design", retryThrottling): with retry.tokens=N > 0 the reference (its
// cluster, shared by the methods that use it) holds N tokens, full at
// first; every attempt failing with a failure of the provider or the path
// (what Retryable retries for an idempotent method) takes one, every
// successful call gives retry.ratio back (at most N), and a retry is made
// only while more than N/2 are left. A first attempt is never refused. So
// a sustained overload that rejects most calls gets about one attempt per
// call instead of retries+1, and retries resume as successes refill the
// budget. A call whose retry the budget refused after a full pool
// (SERVER_THREADPOOL_EXHAUSTED) first waits a backoff (Backoff, bounded
// by the call's deadline), whether or not an untried provider was left,
// so that a caller calling again at once does not spin, then says so:
// "...; retries paused: failover made none of its retries=2, skipped 2:
// the reference's retry budget (retry.tokens=10) is spent by failures,
// and successes refill it". Retries made and refused are counted per
// service key: airnode_consumer_retries_total{service,outcome}. A budget of N pauses retries
// once failures outnumber successes × retry.ratio by about N/2: size N
// to twice the failure bursts to absorb. Read from the reference's URL
// only, service level (a provider's value is not its consumers' default,
// a method-level form has no effect: Export and Refer warn); a method
// choosing a cluster of its own by a method-level key has a budget of its
// own, from the same service-level keys.
//
// A method-level key is "methods.<m>.<key>", or Dubbo's "<m>.<key>" for m
// in the consumer URL's "methods" or, when it has none, for m an exported
// method name ("Slow.retries=0"; "heartbeat.retries" is no method's), read
// at Build as spi.URL.MethodParam and the kernel read "<m>.timeout".
//
// A key the reference URL does not set for a method (at method or
// service level) is the provider's, as in Dubbo, where a provider's
// retries is its consumers' default: the provider of the call's first
// attempt, read from its invoker's URL (the provider URL merged with the
// reference's), methods.<m>.<key> or <m>.<key> before <key>, then the
// default. So serve -p retries=0 makes a failing call one attempt, and
// serve -p Sleep.idempotent=true lets failover retry a Sleep that may
// have run, for every consumer that sets neither; a consumer's own
// retries=1 or idempotent=false wins. A failover among providers that
// disagree follows the one first tried. A direct reference's invokers
// have the reference's own URL: it keeps its own keys and the defaults.
// A provider's malformed value counts as absent. The provider's keys are
// read only once a first attempt has failed, parsed once per invoker.
//
// Retried: connection errors before the request was written (dial errors),
// CHANNEL_INACTIVE before the request was sent, CLIENT_TIMEOUT (never fully
// written; not one whose request took the whole timeout to encode,
// spi.ErrEncodeTimedOut, which would time out encoding again anywhere),
// and the provider's refusals SERVER_THREADPOOL_EXHAUSTED and
// SERVICE_NOT_FOUND (the handler never ran; a kernel provider whose method
// returned one of these statuses answers SERVICE_ERROR instead, since the
// method did run). SERVER_TIMEOUT, SERVER_ERROR (the provider failed
// while running it: a panic, a shutdown that abandoned it, a method's
// "this node is unwell") and CHANNEL_INACTIVE after the request was sent
// (spi.ErrRequestSent: the connection died while the provider may have
// been running it, or the provider answered CHANNEL_INACTIVE: its service
// plugin died) are retried only for idempotent methods; nothing else is
// (SERVICE_ERROR never). Dubbo's failover retries all of these whatever
// the method.
//
// Each retry lists the directory again and prefers a provider not tried
// yet. A tried one is asked again only if its failure may change: never
// after a refused dial, a certificate that failed verification or an
// answer saying the provider is shutting down (spi.ErrProviderShutdown:
// its go-away, or a call its shutdown abandoned) (Repeats),
// so one such provider makes one attempt, "failed after 1 attempt on
// [ADDR]", nor after SERVICE_NOT_FOUND. The message names each provider
// once, with its count when it took several attempts: "failed after 3
// attempts on [ADDR (3 times)]". A full pool (SERVER_THREADPOOL_EXHAUSTED) may
// drain: once every provider has been tried, the next attempt waits a
// jittered exponential backoff first (Backoff: 10–20 ms, doubling, at most
// 100–200 ms), never past the call's deadline: when the next backoff is
// longer than what is left of it, the call ends at once with the full
// pool's status (it did not time out, so it matches no
// context.DeadlineExceeded) and says so on its first line: "...; the
// caller's deadline stopped the retries: the 55ms it left was less than
// the 80ms backoff due after a full pool before attempt 4 of 6
// (retries=5)". A done context, or one
// whose deadline has passed, stops retrying, backoff included: the call
// fails with the error of the last attempt made, and a retry the exchange
// refused unsent (CLIENT_TIMEOUT) because the caller's deadline had passed
// is no attempt. So a first attempt that was sent and timed out when the
// caller's deadline came fails SERVER_TIMEOUT "... timed out after 150ms
// waiting for the response", never CLIENT_TIMEOUT (which says "not sent").
// More generally a call never fails with a status that says the request
// did not run (CLIENT_TIMEOUT, CHANNEL_INACTIVE before sending,
// SERVER_THREADPOOL_EXHAUSTED, SERVICE_NOT_FOUND, a refused dial) when
// one of its attempts may have run: it fails with the last attempt that
// may have run, and the message says which ("failed after 3 attempts on
// [A (3 times)]; the status is attempt 1's, the last that may have run
// (the 2 attempts after it did not run):"), then lists each attempt on
// an indented line of its own: "  attempt 2, A: CLIENT_TIMEOUT: exchange:
// timed out after 1s before the request was written (withdrawn, never
// sent)".
// Safe for concurrent use; owns no goroutine.
package failover
