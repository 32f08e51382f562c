package failover_test

import (
	"context"
	"testing"

	"github.com/airnode/airnode/extensions/cluster/failover"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// tester74 #1: the keys the reference leaves unset are those of the
// provider of the call's first attempt (its invoker's URL), so a
// failover among providers that disagree follows the one first tried;
// the reference's own keys win, at service or method level.
func TestT74_FirstProviderSetsTheUnsetKeys(t *testing.T) {
	busy := fails(&spi.Error{Status: spi.StatusServerThreadpoolExhausted, Message: "busy"})
	ran := fails(&spi.Error{Status: spi.StatusServerTimeout, Message: "timed out"})
	for _, tc := range []struct {
		name, ref, first, second string
		fn                       func(context.Context, *spi.Invocation) spi.Result
		want                     int64 // attempts
	}{
		{"first's retries=0", "", "retries=0", "retries=5", busy, 1},
		{"first's retries=5", "", "retries=5", "retries=0", busy, 6},
		{"first's Echo.retries=1 before its retries=0", "", "retries=0&Echo.retries=1", "", busy, 2},
		{"reference's retries=1 wins", "?retries=1", "retries=0", "", busy, 2},
		{"reference's methods.Echo.retries=3 wins", "?methods.Echo.retries=3", "retries=0", "", busy, 4},
		{"first's idempotent=true", "", "idempotent=true", "", ran, 3},
		{"first's methods.Echo.idempotent=true", "", "methods.Echo.idempotent=true", "", ran, 3},
		{"second's idempotent=true is not the first's", "", "", "idempotent=true", ran, 1},
		{"reference's idempotent=false wins", "?idempotent=false", "idempotent=true", "", ran, 1},
		{"reference's retries, the first's idempotent", "?retries=1", "idempotent=true&retries=0", "", ran, 2},
		{"first's malformed retries counts as absent", "", "retries=abc", "", busy, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref := spi.MustParse("consumer://10.0.0.9/demo.Echo" + tc.ref)
			c, err := failover.Builder{}.Build(ref)
			if err != nil {
				t.Fatal(err)
			}
			a := spitest.NewStubInvoker(spi.MustParse("airnode://10.0.0.1:20880/demo.Echo?"+tc.first), tc.fn)
			b := spitest.NewStubInvoker(spi.MustParse("airnode://10.0.0.2:20880/demo.Echo?"+tc.second), tc.fn)
			dir := spitest.NewStubDirectory(ref, "memory://", a, b)
			for i := range int64(2) { // the second call reads the first provider's keys from the cache
				c.Invoke(context.Background(), echo(), dir, firstLB{})
				if n := a.Calls() + b.Calls(); n != (i+1)*tc.want {
					t.Fatalf("call %d: %d attempts, want %d", i+1, n-i*tc.want, tc.want)
				}
			}
		})
	}
}
