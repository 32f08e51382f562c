package consistenthash

import (
	"fmt"
	"testing"

	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// The ring is rebuilt only when the address set changes.
func TestRingRebuiltOnlyOnMembershipChange(t *testing.T) {
	lb, err := Builder{}.Build(spi.MustParse("consumer://10.0.0.9/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	b := lb.(*Balancer)
	mk := func(i int, q string) spi.Invoker {
		return spitest.NewStubInvoker(spi.MustParse(fmt.Sprintf("airnode://10.0.0.%d:20880/demo.Echo?%s", i, q)), nil)
	}
	inv := &spi.Invocation{Method: "Echo", Args: []any{"k"}}
	l := []spi.Invoker{mk(1, ""), mk(2, ""), mk(3, "")}
	b.Select(l, inv)
	r := b.def.ring.cur.Load()
	for _, same := range [][]spi.Invoker{
		{l[2], l[0], l[1]},                    // reordered
		{l[0], mk(2, "timestamp=1"), l[2]},    // restarted at the same address
		{l[0], l[1], l[2], mk(4, "weight=0")}, // a provider with weight 0
	} {
		b.Select(same, inv)
		if b.def.ring.cur.Load() != r {
			t.Fatal("ring rebuilt although the address set did not change")
		}
	}
	// A provider leaving, or a failover retry over the others, keeps the
	// ring: its points are skipped.
	b.Select(l[:2], inv)
	if b.def.ring.cur.Load() != r {
		t.Fatal("ring rebuilt although the list's addresses are all on it")
	}
	// A new address rebuilds it.
	b.Select(append(l[:3:3], mk(5, "")), inv)
	r5 := b.def.ring.cur.Load()
	if r5 == r || len(r5.points) != 4*DefaultNodes {
		t.Fatal("ring not rebuilt (4 addresses) after a provider joined")
	}
	// Fewer than half of the addresses left: rebuilt, smaller.
	b.Select(l[:1], inv)
	if n := len(b.def.ring.cur.Load().points); n != DefaultNodes {
		t.Fatalf("%d points, want %d after most providers left", n, DefaultNodes)
	}
}
