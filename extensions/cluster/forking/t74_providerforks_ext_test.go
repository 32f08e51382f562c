package forking_test

import (
	"context"
	"testing"

	"github.com/airnode/airnode/extensions/cluster/forking"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// tester74 #1: a provider's forks is its consumers' default (the
// provider picked first, read from its invoker's URL, method level
// first); the reference's own forks wins.
func TestT74_ProviderForksIsTheDefault(t *testing.T) {
	fail := func(context.Context, *spi.Invocation) spi.Result {
		return spi.Result{Err: spi.Errorf(spi.StatusServerError, "down")}
	}
	for _, tc := range []struct {
		name, ref, first string
		want             int64 // providers called
	}{
		{"provider forks=3", "", "forks=3", 3},
		{"provider methods.Echo.forks=1", "", "forks=3&methods.Echo.forks=1", 1},
		{"provider Echo.forks=3", "", "Echo.forks=3", 3},
		{"reference forks=2 wins", "?forks=2", "forks=3", 2},
		{"none: the default 2", "", "", 2},
		{"provider's malformed forks counts as absent", "", "forks=0", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref := spi.MustParse("consumer://10.0.0.9/demo.Echo" + tc.ref)
			c, err := forking.Builder{}.Build(ref)
			if err != nil {
				t.Fatal(err)
			}
			var l []spi.Invoker
			var ps []*spitest.StubInvoker
			for i, q := range []string{tc.first, "forks=1", "forks=1"} {
				p := spitest.NewStubInvoker(spi.MustParse("airnode://10.0.0."+string(rune('1'+i))+":20880/demo.Echo?"+q), fail)
				ps, l = append(ps, p), append(l, p)
			}
			dir := spitest.NewStubDirectory(ref, "memory://", l...)
			for i := range int64(2) { // the second call reads the provider's forks from the cache
				c.Invoke(context.Background(), &spi.Invocation{Service: "demo.Echo", Method: "Echo"}, dir, &rr{})
				var n int64
				for _, p := range ps {
					n += p.Calls()
				}
				if n != (i+1)*tc.want {
					t.Fatalf("call %d: %d providers called, want %d", i+1, n-i*tc.want, tc.want)
				}
			}
		})
	}
}
