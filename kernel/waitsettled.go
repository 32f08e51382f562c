package kernel

import "context"

// WaitSettled blocks until none of the reference's listed providers is
// making its first connection attempt (each ends within connect.timeout,
// 3 s by default), for at most twice connect.timeout and 200 ms, or until
// ctx ends: the wait a consistenthash call makes before its first pick
// (awaitSettled), which it then no longer makes. A one-shot consumer
// (`airnode call`, bench's start) calls it after WaitReady so that its
// first picks are over every provider that answers, by effective weight
// (warm-up), as a long-lived consumer's are, not over the first one to
// connect. With every provider up on loopback it returns within about a
// millisecond of WaitReady; a provider that accepts but never answers
// holds it for connect.timeout. It returns at once when the reference's
// Close or its node's Shutdown begins.
func (r *Reference) WaitSettled(ctx context.Context) { r.awaitSettled(ctx) }
