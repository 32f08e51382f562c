// Package directory keeps the live provider list of one reference: it
// subscribes to a registry, merges every pushed provider URL with the
// consumer's (spi.MergeURL: timestamp, weight, warmup, group, version stay the
// provider's), creates an invoker for each new provider, keeps the invoker of
// a provider whose URL did not change (a push never resets its connections)
// and closes the invokers of providers that left (their channels close and
// their reconnect loops stop). Providers of another group, version or
// protocol than the consumer's, and disabled ones (enabled=false), are
// ignored; so are, when the reference names a transport, providers that
// publish another one (Dubbo's reference protocol: a consumer cannot call
// an smux provider over tcp), and, when the reference sets tls=false,
// providers that publish tls=true (they serve only TLS), with a warning
// and a line in Ignored for the "no provider available" error; providers of another group or
// version are listed there too (at most three, then a count), without a
// warning: other groups of one interface are normal.
//
// A provider listed twice, one protocol, address and service key in two
// entries (a process killed and restarted on its port, whose old
// ephemeral ZooKeeper entry stays until its session expires), counts
// once: the entry with the highest timestamp is kept, on a tie the one
// seen last, and the other is logged at Debug, so the address gets one
// share of the calls and the restarted process its own warm-up, whatever
// the registry.
//
// A consumer's group or version may be a list ("a,b") or "*" (Dubbo's
// multi-group and any references; Multi): the directory then subscribes
// to each service key that fits, for "*" those the registry's Services
// lists (a registry that cannot list them fails Start), asks Services
// again every RescanInterval (2s) for keys that appeared, and lists the
// providers of all of them. A pattern ("a*") or an empty item fails
// Start (CheckGroupVersion).
//
// Hold keeps chosen providers listed after the registry drops them (the
// kernel's own providers while their node drains at shutdown) until
// Refresh finds them no longer held.
//
// Empty protection and removal damping (protect.go) keep providers
// the registry stopped listing while they are connected and not
// shutting down: a notification that would leave the reference none
// keeps them until the registry lists one again (Dubbo's
// enable-empty-protection; URL key registry.empty.protection, default
// true), and one that drops registry.removal.damping percent (25) or
// more of them at once, two at least, keeps them for
// registry.removal.grace (30s) unless listed again. A kept provider
// goes as soon as it is unavailable (connection closed, go-away or
// read-only, ejected), answers SERVICE_NOT_FOUND (NotServing) or says it
// drains (Draining: empty protection keeps a draining provider only when
// there is no other), and, a Prober, about 2.5 s after it started being
// kept if it answered nothing to its probe (a hung provider). One Warn per
// episode; Kept lists them.
//
// List, called on every call, reads an atomically swapped snapshot: it never
// blocks for long and does not allocate while every invoker is available.
// When every invoker is Watched (the kernel's are), the snapshot keeps its
// available invokers, rebuilt on the first List after their Epoch moved
// (a connection up or down, a read-only provider, an ejection and its
// end): a List between changes costs a pointer load and one atomic load,
// whatever the number of providers (gRPC's picker,
// rebuilt on a connection's state change, in spirit). Other invokers are
// asked on every List. Close stops the subscription and closes every
// invoker; it is idempotent.
package directory
