package zookeeper_test

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/spi"
)

// versionURL is the provider entry of demo.Echo version "i.0" at port.
func versionURL(port, i int) spi.URL {
	return spi.MustParse(fmt.Sprintf("airnode://127.0.0.1:%d/demo.Echo?methods=Echo%%2CSleep&side=provider&timestamp=1796159204199&version=%d.0&weight=100", port, i))
}

// nu43 finding 3: a providers node holds every version of its interface,
// and each read of it parsed and sorted all of its entries whichever one
// service key it was for, so looking up each of n versions (registry ls)
// and every subscription's re-list after a change cost n × n entry
// parses. Each entry is now parsed once: n Lookups of n versions parse n
// entries, for 10 versions as for 100; n subscriptions, one per version,
// re-listing after one more provider registers, parse that one entry.
func TestEachProviderEntryDecodedOnce(t *testing.T) {
	for _, n := range []int{10, 100} {
		t.Run(strconv.Itoa(n)+"versions", func(t *testing.T) {
			root := "zk1decode" + strconv.Itoa(n)
			prov := build(t, server.URL("root="+root))
			for i := 0; i < n; i++ {
				if err := prov.Register(ctx(t), versionURL(25001, i)); err != nil {
					t.Fatal(err)
				}
			}
			r := build(t, server.URL("root="+root))
			for i := 0; i < n; i++ {
				l, err := r.Lookup(ctx(t), spi.MustParse(fmt.Sprintf("airnode:///demo.Echo?version=%d.0", i)))
				if err != nil || len(l) != 1 || l[0].ParamOr(spi.KeyVersion, "") != fmt.Sprintf("%d.0", i) {
					t.Fatalf("Lookup of version %d.0: %v, %v; want its one provider", i, l, err)
				}
			}
			if got := zookeeper.DecodedEntries(r); got != int64(n) {
				t.Errorf("%d Lookups of %d versions decoded %d entries; want each once (%d)", n, n, got, n)
			}

			// One subscription per version; then one more provider of
			// version 0.0 joins: every subscription re-lists the node.
			var mu sync.Mutex
			lists := make([][]spi.URL, n)
			for i := 0; i < n; i++ {
				i := i
				s, err := r.Subscribe(ctx(t), spi.MustParse(fmt.Sprintf("airnode:///demo.Echo?version=%d.0", i)), func(p []spi.URL) {
					mu.Lock()
					lists[i] = p
					mu.Unlock()
				})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(s.Stop)
			}
			lens := func() (ones, zeroTwo int) {
				mu.Lock()
				defer mu.Unlock()
				for i, l := range lists {
					if len(l) == 1 {
						ones++
					}
					if i == 0 && len(l) == 2 {
						zeroTwo = 1
					}
				}
				return
			}
			waitFor(t, func() bool { ones, _ := lens(); return ones == n })
			before := zookeeper.DecodedEntries(r)
			if err := prov.Register(ctx(t), versionURL(25002, 0)); err != nil {
				t.Fatal(err)
			}
			waitFor(t, func() bool { ones, two := lens(); return ones == n-1 && two == 1 })
			// Every subscription has re-listed once its watch fired: wait
			// for the re-lists to finish before counting.
			time.Sleep(300 * time.Millisecond)
			if got := zookeeper.DecodedEntries(r) - before; got != 1 {
				t.Errorf("%d subscriptions re-listing after one provider joined decoded %d entries; want the new one only (1)", n, got)
			}
		})
	}
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
