package spi

import "context"

// FilterBuilder is the "filter" extension point (URL key "filter": a
// comma list where "-name" removes a filter and "default" stands for the
// activated set). Filters wrap every invoke on the consumer, the provider,
// or both.
type FilterBuilder interface {
	Name() string
	// Activation says when the filter is switched on without being listed.
	Activation() Activation
	// Build returns the filter for one reference or export URL. Pure. It
	// runs on Export's or Refer's goroutine (a per-provider filter's on the
	// one delivering that provider), and nothing bounds it: one that
	// blocks keeps Export or Refer from returning past its ctx (package
	// doc, "What the kernel does not bound").
	//
	// u carries KeySide, side=consumer or side=provider: the side the
	// filter is built for, which a filter of both sides (Activation.Sides)
	// tells them apart by. Refer builds the consumer chain once per
	// reference from its URL (a PerProvider filter once per provider
	// invoker, from that provider's merged URL, side=consumer). Build may
	// run more than once for one export, and a filter it returns be
	// dropped unused: Export builds the provider chain before it listens,
	// from the URL it plans to publish, and, when the published URL
	// differs (port 0 on an address with no listener yet: the first URL
	// has no port), again from the published one, whose filters serve the
	// calls; serve's checks and `airnode list --explain` build filters to
	// report their errors too. Nothing closes a filter, so Build starts no
	// goroutine and holds nothing that needs releasing (share such a
	// resource between builds, in the builder).
	Build(u URL) (Filter, error)
}

// Activation is Dubbo's @Activate: a filter is in the default chain of a
// side when Sides contains that side and, if Key is set, the URL has Key
// with a value other than "false" (any case; as Dubbo, key=false leaves
// the filter out, unless the filter declares Key, KeyDescriber, of a type
// "false" is not a value of, an int: its Build then refuses the value).
// Any other value activates it, "0" and "" included: Build reads it. Which URL is read: a reference's filters, the
// reference's URL (a key a provider publishes does not activate them); a
// PerProvider filter, that provider's merged URL (so a provider's key
// does); a provider's filters, the export URL.
// Empty Sides activates the filter on no side: only a URL whose "filter"
// key names it puts it in a chain (of either side), and Key then
// activates nothing; serve, call, bench and list warn of a plugin filter
// with a Key and no Sides when they start it, `airnode plugin check`
// warns of it, and `airnode list --explain` says why a URL with the key
// leaves it out of the chain.
// Lower Order runs first (outermost). A filter of both sides is built
// once per side, and its Build URL's "side" key says which
// (FilterBuilder.Build).
type Activation struct {
	// Sides are the sides whose default chain the filter is in: Consumer,
	// Provider, or both; empty: neither (only a "filter" key names it).
	Sides []Side
	// Key, when set, is the URL key that must be present (with a value
	// other than "false") for the filter to be activated; "": always.
	Key string
	// Order places the filter in its chain: lower runs first
	// (outermost); filters of equal Order run in name order.
	Order int
	// PerProvider places a consumer filter below the cluster and the load
	// balancer: the kernel builds it for each provider invoker from that
	// provider's merged URL (MergeURL) and wraps that invoker, so the filter
	// sees the provider a call goes to (Dubbo's ActiveLimitFilter counts per
	// provider). False: the filter wraps the reference, above the cluster.
	// The provider side ignores it.
	PerProvider bool
	// PerMethod lets Key be given per method as well ("methods.<m>.<Key>"
	// or Dubbo's "<m>.<Key>"): the filter is then in the service's chain
	// when Key is set at service level or for any method
	// (URL.MethodsSetting: "methods.<m>.<Key>", or "<m>.<Key>" for a
	// method the URL lists or, when it lists none, an exported Go name;
	// Dubbo's getActivateExtension takes any key ending in "."+Key), and it
	// reads each method's value itself per call. For limits such as
	// "executes" and "actives", which Dubbo users set per method.
	PerMethod bool
}

// Filter intercepts an invoke. It calls next.Invoke to continue, or returns
// a Result itself to short-circuit. Called concurrently.
//
// The kernel does not bound Invoke. On the consumer it runs on the
// caller's goroutine with the caller's ctx; the reference's "timeout" key
// bounds only what runs below the filters (each attempt's wait for the
// provider's answer), so a consumer filter that blocks keeps the call
// from returning, past its ctx and its timeout. On the provider it runs
// on the handler's goroutine with a ctx that ends at the consumer's
// deadline: the consumer is answered at its deadline anyway, but the
// goroutine stays in the filter, and Shutdown abandons it
// (kernel.AbandonedError). A filter that waits (a rate limiter, a remote
// check) selects on ctx.Done() and returns a Result with an *Error
// (StatusClientTimeout on the consumer) when ctx ends first.
//
// A filter's error chooses its status by carrying an *Error. A plain
// error (none in its chain) is, on the consumer, CLIENT_ERROR (StatusOf
// gives the same) naming the filter by its name in the catalog:
// "CLIENT_ERROR: kernel: call shop.Cart.Add: consumer filter "quota":
// quota exceeded". On the provider it is SERVICE_ERROR, the status of
// the method's own errors (and the one Dubbo answers a provider filter's
// exception with); when the method did not run (next was not called)
// the message says so and names the filter: "SERVICE_ERROR: kernel:
// shop.Cart.Add did not run: provider filter "quota" refused the call:
// quota exceeded". A consumer filter's error that wraps an *Error
// (fmt.Errorf("auth: %w", err)) reaches the caller as FromError gives
// it: that *Error's status, the wrapper's text ("SERVICE_ERROR: auth:
// boom").
type Filter interface {
	Invoke(ctx context.Context, next Invoker, inv *Invocation) Result
}
