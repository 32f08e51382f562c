// Package spi is airnode's vocabulary: the URL model, invocations and results,
// wire status codes and their typed error, and one interface per extension
// point (transport, registry, loadbalance, codec, heartbeat, cluster, filter).
//
// Every extension — bundled under extensions/ or served by a plugin process
// through sdk/ — implements an interface from this package, and the kernel
// only ever talks to those interfaces. spi imports nothing else of airnode.
//
// Each point has a builder with Name() and, where the extension is configured
// per URL, Build(URL). Building is pure: no I/O and no goroutines; whatever
// starts work has its own Start/Listen/Dial and a Close that waits for it.
package spi
