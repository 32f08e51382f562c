// Package sdk is all a third-party airnode plugin author imports (with spi).
//
// An author implements the ordinary spi interface of a point and serves it:
//
//	func main() {
//		sdk.Serve(sdk.Plugins{LoadBalance: p2c.Builder{}})
//	}
//
// Points that may be plugins: loadbalance, registry, filter, and services
// (a provider implementation that airnode exports, registers and forwards
// invocations to). Transport, codec and heartbeat stay in process: a local
// RPC per frame would defeat them (a plugin call costs tens of
// microseconds; see the README for the measured numbers). A builder that
// also implements spi.KeyDescriber has its URL keys sent to the host at
// start: `airnode list --keys` shows them and Refer and Export suggest
// them for misspelt keys, as for a bundled extension.
//
// The SDK owns the go-plugin handshake (magic cookie, protocol version
// negotiated from versioned plugin sets), the gRPC stubs
// (sdk/pluginrpc/pluginpb, regenerated with go generate) and logging through
// hclog to stderr, which the host collects. A plugin process exits by
// itself within about a second of its host dying, even by kill -9; a
// SIGTERM to the process group leaves it to the host to stop it (TermGrace).
// sdk/sdktest runs the conformance suites against an implementation in
// process, through the same gRPC adaptation, without building a binary.
package sdk
