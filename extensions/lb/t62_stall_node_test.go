package lb_test

import (
	"context"
	"testing"
	"time"
)

// tester62 finding 1: one of four providers stalled (SIGSTOP) for 10 s
// while eight callers called with bench's default timeout (10s), and p2c
// made no call for 7 seconds, shortestresponse none for 2 in one run of
// five: every caller ended up waiting on the stalled provider, whose
// estimate, fed by no answer, stayed fast (p2c's even decayed) while a
// peer's peaked with one slow answer of a loaded machine. Now a call in
// flight counts as at least as slow as it has waited
// (spi.Stats.OldestInFlight). Here the stall is a provider whose calls
// take 4 s for 4 s (no call times out: timeout=10s, so outlier ejection
// does not apply), and the other three answer one call in 500 in 20 ms,
// as a loaded machine's processes do; they must keep finishing calls in
// every second of the stall, with each balancer that routes by calls in
// flight. In one process the old failure seldom shows (here the stalled
// provider's own estimate had peaked too); the balancers' unit tests
// TestStalledProviderLosesByItsWait show the mechanism, and the README
// gives the split-process measurement.
func TestT62_StalledProviderLeavesNoDeadSecond(t *testing.T) {
	for _, lb := range []string{"p2c", "shortestresponse", "leastactive"} {
		t.Run(lb, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			ref, provs := fleet(t, ctx, 4, "loadbalance="+lb+"&timeout=10s")
			for _, p := range provs[1:] {
				// a loaded machine's hiccups: a peak-sensitive estimate
				// holds one for seconds
				p.hiccup.Store(int64(20 * time.Millisecond))
				p.hiccupEvery.Store(500)
			}
			stop := callers(ctx, ref, 8)
			defer func() { provs[0].setDelay(0); stop() }()
			time.Sleep(time.Second) // every provider answered and has an estimate

			const stall = 4 * time.Second
			provs[0].setDelay(stall)
			var perSecond []int64 // calls the other three got
			for range int(stall / time.Second) {
				before := counts(provs[1:])
				time.Sleep(time.Second)
				_, n := shares(before, counts(provs[1:]))
				perSecond = append(perSecond, n)
			}
			provs[0].setDelay(0)
			t.Logf("%s: calls the other providers got in each second of the stall: %v", lb, perSecond)
			for i, n := range perSecond {
				if n == 0 {
					t.Errorf("no call went to the other providers in second %d of a stall of one provider in four (%v): the callers all waited on it", i+1, perSecond)
				}
			}
		})
	}
}
