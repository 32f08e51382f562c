// Package integration tests the bundled filters in real kernel nodes over
// loopback: metrics on /metrics, executelimit, activelimit, token and
// accesslog around demo.Echo. It has no non-test code.
package integration
