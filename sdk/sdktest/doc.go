// Package sdktest is the in-process harness for plugin authors: it serves an
// implementation over real gRPC (the gRPC services sdk.Serve registers,
// on an in-memory listener; quiet: no go-plugin debug lines in go test
// -v), wraps it in the same adapters the airnode
// host registers, and runs the conformance suites of package spitest on the
// result — so the gRPC adaptation is exercised without building a binary.
// The host-side builders it returns carry what the plugin declared over the
// protocol, as the host's do: a filter's activation and the URL keys the
// extension declares (spi.KeyDescriber), so a catalog holding them lists
// the keys and counts them in the kernel's typo warnings.
//
//	func TestConformance(t *testing.T) { sdktest.TestLoadBalance(t, p2c.Builder{}) }
//
// A registry that cannot register (Register answers spi.ErrNotSupported)
// runs TestReadOnlyRegistry, the read-only subset, instead of
// TestRegistry, with a function that changes what its backend lists.
//
// Everything it starts is stopped by t.Cleanup.
package sdktest
