// Package spitest holds airnode's conformance suites: one exported Test<Point>
// function per extension point, which every implementation of that point —
// bundled, third-party or served by a plugin process — runs from its own
// tests (STYLE 13):
//
//	func TestConformance(t *testing.T) { spitest.TestTransport(t, smux.Builder{}) }
//
// A suite runs subtests against real parts (TCP on 127.0.0.1, real files),
// bounds every wait with a deadline, and fails on a panic, a hang, a race or
// a leaked goroutine. Suites must not run in parallel with other tests of the
// same package when they check for leaked goroutines. spitest imports only
// spi, the standard library and go.uber.org/goleak.
package spitest
