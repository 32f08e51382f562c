// Package pluginhost runs airnode's out-of-process plugins: it launches the
// binaries declared in the plugins: section of plugins.yaml (go-plugin over
// gRPC), checks their sha256 first when one is given, performs the
// handshake, and adapts each plugin into a catalog extension (loadbalance,
// registry, filter) registered with its binary path as origin, or into
// service invokers the node exports.
//
// Supervision: a plugin that exits is restarted with exponential backoff
// according to its restart policy (always, on-failure, never). While it is
// down, calls that need it fail fast with a status naming the plugin and the
// reason, except balancers, which fall back to the point's default balancer
// with a rate-limited warning. A plugin that fails never takes the host
// down. Close stops every plugin (gracefully, then by force) and waits for
// every goroutine the Host started. A Host is safe for concurrent use.
package pluginhost
