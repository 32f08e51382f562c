package main

import (
	"strings"
	"testing"
)

// TestT12Ops3_BenchSaysHowManyConnectionsAreUp (tester12 finding 3): a
// run whose provider accepted only some of the connections asked for
// says so instead of "40 connection(s)"; a run that got them all, or
// whose reference has no remote provider to count, keeps the plain text.
func TestT12Ops3_BenchSaysHowManyConnectionsAreUp(t *testing.T) {
	for _, tc := range []struct {
		up, asked int
		want      string
	}{
		{40, 40, "40 connection(s)"},
		{0, 0, "40 connection(s)"},
		{29, 40, "only 29 of 40 connection(s) up (the others got no answer to their first ping: is the provider out of file descriptors? see its log)"},
	} {
		got := connectionsText(benchOutcome{ConnectionsUp: tc.up, ConnectionsAsked: tc.asked}, 40)
		if got != tc.want {
			t.Errorf("connectionsText(%d of %d) = %q, want %q", tc.up, tc.asked, got, tc.want)
		}
		if tc.up < tc.asked && !strings.HasPrefix(got, "only ") {
			t.Errorf("%q does not lead with the shortfall", got)
		}
	}
}
