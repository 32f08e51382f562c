// Package memory is the in-process registry, extension name "memory"
// (URL scheme "memory"): providers and consumers registered in one process,
// pushed to subscribers of the same process on every change. It is a real
// registry for tests and single-process use, not a test double.
//
// Registries built by one Builder from URLs with the same host share one
// in-process namespace ("memory://" is the default namespace, "memory://a"
// another); registries of different Builders never see each other. A
// node's catalogs hold one memory Builder, so nodes share a namespace only
// when built from one catalog set: one bundle.Catalogs() (or
// extension.New) passed to every kernel.NewNode. Nodes that each call
// bundle.Catalogs() have namespaces of their own even under the same URL,
// and their references' calls fail SERVICE_NOT_FOUND saying so.
// Its Reach is spi.ReachProcess: airnode serve warns that no other process
// finds providers registered here.
//
//	URL key   type  default  meaning
//	(host)    name  ""       namespace shared by this Builder's registries
//
// Register and Unregister return once the namespace's subscribers of the
// service key have applied the new provider list (bounded by ctx and 1s),
// so a consumer of the same process lists a provider as soon as its
// Export has returned.
//
// The URL takes no parameters. All methods are safe for concurrent use; Close
// unregisters everything the registry registered and waits for its
// subscriptions' goroutines.
package memory
