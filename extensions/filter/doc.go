// Package filter groups airnode's bundled filters, one package each. They
// implement spi.FilterBuilder and are switched on by activation (side, URL
// key, order) and edited by the "filter" key ("-name" removes
// one, "default" stands for the activated set). Lower order runs first
// (outermost):
//
//	order  name          sides               activated by
//	-200   metrics       consumer, provider  always
//	-100   accesslog     consumer, provider  accesslog
//	 -50   token         consumer, provider  token
//	 -10   threadlimit   provider            threads (a cap per provider address)
//	   0   executelimit  provider            executes
//	   0   activelimit   consumer            actives (per provider: below the cluster)
//
// So metrics and the access log see, with their status, the calls that
// token and the limits refuse. Consumer filters run above the cluster (one
// call of the reference, whatever provider the balancer picks) unless their
// Activation is PerProvider (activelimit): those wrap each provider invoker.
// A failure the cluster below swallowed (failsafe) comes up in
// spi.Result.Swallowed with a nil Err: the access log and the metrics
// series report it with its status. Filters
// that log take their node's logger (spi.LoggerUser).
// Filters are built once per reference or export from its URL and resolve
// method-level keys ("methods.<m>.<key>") per call, cached per method.
package filter
