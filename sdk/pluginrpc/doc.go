// Package pluginrpc is the wire between an airnode host and its plugin
// processes: the go-plugin handshake and versioned plugin sets, the gRPC
// servers that wrap an author's spi implementation inside the plugin, and
// the spi adapters the host registers in its catalogs (a LoadBalanceBuilder,
// RegistryBuilder or FilterBuilder, and a service Invoker, each backed by a
// gRPC client).
//
// Plugin authors do not import this package; they use package sdk. The host
// (kernel/pluginhost) and the in-process harness (sdk/sdktest) do. The gRPC
// contract is pluginpb/plugin.proto, protocol version ProtocolVersion.
//
// Adapters take a Source, which yields the live client of a plugin or the
// reason it is down, so supervision (restarts, fail-fast, fallback) stays in
// the host. Every adapter is safe for concurrent use. Balancer adapters
// are spi.ContextLoadBalance: a Select waits at most DefaultSelectTimeout
// and the call's own bound, and one that times out bypasses the plugin
// for DefaultBypass, doubling to DefaultMaxBypass (NewLoadBalanceBuilder).
// Filter adapters keep the kernel's reserved attachments (NewFilterBuilder).
package pluginrpc
