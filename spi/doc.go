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
//
// # What the kernel does not bound
//
// The kernel bounds, with the step's ctx, the extension calls that may
// wait on the network: Listen, Dial, a registry's calls, a transport
// session's calls (a late one is reported as a *LeftRunningError of
// package kernel). It does not bound the calls this package says are
// pure or must not block; it runs them on the goroutine of the step that
// needs them and waits for them however long they take:
//
//   - every builder's Build but a registry's: on Export's or Refer's
//     goroutine (the provider's transport and filters; the reference's
//     cluster, balancer and filters, and the direct registry of a
//     reference with hosts), on the goroutine delivering a
//     registry's provider list (each new provider's transport, heartbeat
//     and per-provider filters), and on the goroutine of a method's first
//     call when the method selects its own cluster or balancer. Neither
//     Export's nor Refer's ctx, nor a call's, ends the wait: a Build that
//     blocks keeps that Export, Refer, provider list or call from
//     returning, past its ctx (a panic in Build is recovered and fails the
//     step, extension.PanicError).
//   - LoadBalance.Select and the consumer's filters (Filter.Invoke) and
//     cluster (Cluster.Invoke): on the caller's goroutine. The call's
//     "timeout" key bounds only each attempt's wait for the provider's
//     answer (and the wait for a first provider), below them; the caller's
//     ctx bounds them only as far as they watch it themselves. A Select or
//     a consumer filter that blocks keeps the call from returning, past
//     its ctx and its timeout.
//
// A registry's Build (a RegistryBuilder's: the node's registry, Refer's
// registry URL, Export's "registry" key) is bounded: it runs on a
// goroutine of its own,
// without the node's lock, and Export or Refer waits for it until its
// ctx's end, then fails with a *LeftRunningError naming `registry "x"
// Build` and leaves it running. Shutdown and the node's other Exports
// and Refers are not held up by it; those needing the same registry URL
// wait for that one Build, each until its own ctx's end. A Build that
// returns later makes the node's registry for that URL, or is closed if
// the node has shut down.
//
// An extension that must wait does so on ctx: a consumer filter selects
// on ctx.Done(), a balancer that waits is a ContextLoadBalance, and a
// builder that needs I/O does it later, in the method that is given a
// ctx (Registry.Register, Transport.Dial) or in a Start.
package spi
