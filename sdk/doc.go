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
// RPC per frame would defeat them (a filter plugin costs the process that
// runs it about 0.15–0.2 ms of CPU per call at 20 callers, host and plugin
// together, adds about 0.5 ms of latency at one caller on an idle VM and
// caps a 2-core process near 7–8.5k calls/s, 15× below none: sdk/README.md,
// "Cost of a plugin call", measured with
// sdk/pluginrpc/testdata/filtercost.sh). A builder that
// also implements spi.KeyDescriber has its URL keys sent to the host at
// start: `airnode list --keys` shows them and Refer and Export suggest
// them for misspelt keys, as for a bundled extension; a key declared with
// spi.KeyDoc.Secret is redacted by the host wherever it prints a URL, as
// token is.
//
// The SDK owns the go-plugin handshake (magic cookie, protocol version
// negotiated from versioned plugin sets), the gRPC stubs
// (sdk/pluginrpc/pluginpb, regenerated with go generate) and logging through
// hclog to stderr, which the host collects. A plugin process does not
// outlive its host, even one killed by kill -9: on Linux the host's
// kernel/pluginhost has the OS SIGKILL it as the host dies
// (PR_SET_PDEATHSIG); elsewhere, and as a backup, it exits by itself
// (status 3) within ParentPoll, 200 ms, of its parent changing; a
// SIGTERM leaves it to the host to stop it: the plugin asks the host to
// hand its calls over to a new process and serves until it is closed
// (TermGrace).
// sdk/sdktest runs the conformance suites against an implementation in
// process, through the same gRPC adaptation, without building a binary.
package sdk
