package spi

import "context"

// LoadBalanceBuilder is the "loadbalance" extension point (URL key
// "loadbalance", method-level allowed, default "random").
type LoadBalanceBuilder interface {
	Name() string
	// Build validates the balancer's keys in u (the consumer's reference
	// URL) and returns a balancer for that one reference. Pure.
	//
	// Method-level keys: u is the whole reference URL, never a per-method
	// view, and Build is not told a method. The kernel builds one balancer
	// for the reference, plus one for each method whose own
	// "loadbalance" (methods.<m>.loadbalance, or Dubbo's <m>.loadbalance)
	// selects another balancer; each of these Builds gets the same u.
	// The kernel applies no method-level form of the balancer's own keys:
	// "methods.Echo.wlr.choices=99" reaches the balancer only if Build or
	// Select looks it up itself. A balancer that supports per-method
	// values reads them with u.MethodParam(m, key) (or MethodInt,
	// MethodDuration) for each method u.MethodsSetting(key) returns (u
	// usually has no "methods"), in Build, validating each there, or
	// per call with inv.Method in Select from values it prepared in
	// Build (Select must not parse). One that does not
	// should say so in its KeyDoc's Doc: the kernel's typo warning checks
	// a method-level key by its key, so a declared key written per method
	// passes without a word.
	//
	// Build runs on Refer's goroutine (once more for each method with a
	// loadbalance key of its own) and nothing bounds it: one that blocks
	// keeps Refer from returning past its ctx (package doc, "What
	// the kernel does not bound").
	Build(u URL) (LoadBalance, error)
}

// LoadBalance picks one invoker per call.
//
// Select is the per-call fast path: it is called concurrently, must not
// block or do I/O, and should not allocate. The cluster calls it on the
// caller's goroutine with no bound: neither the call's ctx nor its
// "timeout" key (which bounds only the wait for the provider's answer,
// after Select) ends a Select that blocks, so the call never returns
// while it does; a balancer that may wait implements ContextLoadBalance
// and watches ctx itself (package doc, "What the kernel does not
// bound"). invokers is non-empty and holds
// only available invokers; the slice must not be kept or modified. Weights
// come from each invoker's URL ("weight", "warmup", "timestamp"), live load
// from its Stats.
//
// An invoker with weight 0 is never picked; Select returns nil only when no
// invoker of the list may be picked (every weight is 0), and clusters turn
// that into StatusServiceNotFound. Select returns one of invokers itself:
// the bundled clusters refuse any other invoker with StatusClientError
// naming the balancer, and call nothing. Balancers only read Stats, never record
// into them (see Stats).
type LoadBalance interface {
	Select(invokers []Invoker, inv *Invocation) Invoker
}

// ContextLoadBalance is an optional interface of a LoadBalance whose pick
// may wait on something outside the process, such as a plugin balancer's
// round trip to its plugin (sdk/pluginrpc). The bundled clusters call
// SelectContext instead of Select, with the call's ctx, so that the
// caller's deadline bounds the pick as it bounds the rest of the call.
//
// SelectContext returns what Select would (nil: nothing selectable), or
// an error when it could not pick within the call's deadline or timeout:
// an *Error, StatusClientTimeout, naming the balancer and the time it
// took, which the cluster returns as the call's result (nothing was
// sent, so it is never retried on another provider). It may block until
// ctx's deadline and is called concurrently; invokers is as for Select.
// The kernel does not stop waiting at ctx's end itself: SelectContext
// must return when ctx ends.
type ContextLoadBalance interface {
	LoadBalance
	SelectContext(ctx context.Context, invokers []Invoker, inv *Invocation) (Invoker, error)
}

// ProviderStart is an optional interface of an Invoker that knows, from
// the provider itself, when the provider process its connection reached
// started (the kernel's: the provider's hello, on each new connection).
// That may be later than the "timestamp" of the registry entry the
// invoker was made from: a provider restarted on the same address while
// the registry is unreachable keeps its old entry in the consumer's
// directory. The bundled balancers' warm-up (extensions/lb/warmup)
// counts from the later of the two when the entry has a timestamp (an
// entry without one stays warm).
type ProviderStart interface {
	// ProviderStarted returns the start the provider of the invoker's
	// live connection gave, in ms since the epoch on the provider's
	// clock (as the "timestamp" key); 0 when unknown: no connection up,
	// or a provider that does not say. It must not block (a few atomic
	// loads) and is called concurrently.
	ProviderStarted() int64
	// StartChanges returns a counter that moves after ProviderStarted's
	// value may have changed (a connection came up), so that a balancer
	// caching weights reads ProviderStarted again only then: the same
	// counter for the invoker's life, possibly shared by many invokers
	// (the kernel's: one per node). nil: the value never changes.
	StartChanges() interface{ Load() uint64 }
}
