// Package spitest holds airnode's conformance suites: one exported Test<Point>
// function per extension point (TestTransport, TestCodec, TestRegistry,
// TestLoadBalance, TestCluster, TestHeartbeat, TestFilter), which every
// implementation of that point — bundled, third-party or served by a
// plugin process — runs from its own tests:
//
//	func TestConformance(t *testing.T) { spitest.TestTransport(t, smux.Builder{}) }
//
// A suite whose point has designs that promise different things takes an
// optional options struct as its last argument (ClusterOptions for a
// broadcast or forking cluster, HeartbeatOptions, FilterOptions: Params,
// AddsAttachments for a filter that adds documented attachments, such
// as a tracing filter's trace id, and Attachments for the ones a
// provider-side gate requires of the calls it lets through). A registry
// that discovers but cannot register runs TestReadOnlyRegistry, the
// read-only subset of TestRegistry.
//
// A suite runs subtests against real parts (TCP on 127.0.0.1, real files),
// bounds every wait with a deadline, and fails on a hang, a race or a
// leaked goroutine. A panic of the extension in a call the suite makes
// fails that subtest with the panic's value and stack, and the suite and
// the test binary go on; a panic in a goroutine the extension starts
// itself still ends the binary. Suites must not run in parallel with
// other tests of the same package when they check for leaked goroutines.
// spitest imports only spi, the standard library and go.uber.org/goleak.
package spitest
