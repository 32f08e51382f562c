package kernel

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/spi"
)

// namedProviders starts n provider nodes exporting demo.Echo on free
// loopback ports, node names p0, p1, ..., and returns their addresses.
func namedProviders(t testing.TB, n int) []string {
	t.Helper()
	var addrs []string
	for i := range n {
		p := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
		t.Cleanup(func() { _ = p.Close() })
		e, err := p.Export(t.Context(), demo.New("p"+string(rune('0'+i)), 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, e.URL().Address())
	}
	return addrs
}

// Tester8 #4: consistenthash is consistent from the first call of a fresh
// consumer (a CLI call, a cron job): the first call waits until every
// provider's first connection attempt has ended, so the ring is over all
// three providers, not over whichever connected first. Fresh references,
// each with the providers in another order, all send the same key to the
// same provider.
func TestConsistentHashFirstCallOfFreshReferencesAgree(t *testing.T) {
	addrs := namedProviders(t, 3)
	first := ""
	for i := range 12 {
		rand.Shuffle(len(addrs), func(a, b int) { addrs[a], addrs[b] = addrs[b], addrs[a] })
		c := NewNode(testCatalogs(t), WithLogger(quiet))
		r := refer(t, c, "airnode://"+strings.Join(addrs, ",")+"/demo.Echo?loadbalance=consistenthash")
		var info demo.Info
		err := r.Call(ctxT(t), "Info", nil, &info)
		_ = c.Close()
		if err != nil {
			t.Fatalf("fresh reference %d: %v", i, err)
		}
		if first == "" {
			first = info.Node
		}
		if info.Node != first {
			t.Fatalf("fresh reference %d sent the key to %s, reference 0 to %s: consistenthash must pick the same provider from every consumer", i, info.Node, first)
		}
	}
}

// A provider that accepts connections but never answers (hung) holds the
// first consistenthash call at most about connect.timeout; then the ring
// is over the providers that answered, and later calls do not wait.
func TestConsistentHashFirstCallWaitIsBoundedByConnectTimeout(t *testing.T) {
	addrs := append(namedProviders(t, 2), testproxy.Hung(t))
	r := refer(t, consumer(t), "airnode://"+strings.Join(addrs, ",")+"/demo.Echo?loadbalance=consistenthash&connect.timeout=300ms&timeout=5s")
	start := time.Now()
	var info demo.Info
	if err := r.Call(ctxT(t), "Info", nil, &info); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("first call took %v with connect.timeout=300ms", took)
	}
	for range 5 {
		var again demo.Info
		if err := r.Call(ctxT(t), "Info", nil, &again); err != nil || again.Node != info.Node {
			t.Fatalf("later call: %v, %s; want %s again", err, again.Node, info.Node)
		}
	}
}

// BenchmarkFirstCall measures a fresh reference's Refer plus first call
// against three loopback providers: the cost of consistenthash's wait for
// every first connection, relative to random's wait for the first one.
func BenchmarkFirstCall(b *testing.B) {
	addrs := namedProviders(b, 3)
	for _, lb := range []string{"random", "consistenthash"} {
		b.Run(lb, func(b *testing.B) {
			u := spi.MustParse("airnode://" + strings.Join(addrs, ",") + "/demo.Echo?loadbalance=" + lb)
			for b.Loop() {
				c := NewNode(testCatalogs(b), WithLogger(quiet))
				r, err := c.Refer(b.Context(), u, spi.URL{})
				if err != nil {
					b.Fatal(err)
				}
				var info demo.Info
				if err := r.Call(b.Context(), "Info", nil, &info); err != nil {
					b.Fatal(err)
				}
				_ = c.Close()
			}
		})
	}
}
