// Package direct is the registry without a registry, extension name
// "direct": the consumer names its providers' addresses and Subscribe pushes
// that fixed list once. Register and Unregister are no-ops (Reach
// spi.ReachNone: airnode serve warns that nobody finds its providers here).
//
// The addresses come from the URL given to Build — "direct://h1:p1,h2:p2"
// (with Dubbo's ?backup=h3:p3 too), or a consumer's own multi-host URL such as
// "airnode://h1:p1,h2:p2/demo.Echo", one provider per host — or, when that URL
// has no host ("direct://"), from the hosts of the consumer URL passed to
// Subscribe. A provider URL is the consumer URL with the provider's address,
// the scheme of the protocol key, and without side, backup and the keys
// each provider sets for itself (weight, warmup, timestamp: a consumer's
// value of them has no effect).
//
//	URL key   type    default    meaning
//	protocol  string  "airnode"  scheme of the provider URLs ("direct://" URLs only)
//	backup    hosts   ""         more provider addresses, "h:p,h:p"
//
// Safe for concurrent use; Close stops every subscription and waits for it.
package direct
