// Package spitest holds the conformance suites of airnode's extension
// points: every implementation, bundled or plugin-backed, runs the suite of
// its point from its own tests (STYLE 13).
package spitest
