package roundrobin

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/lb/warmup"

	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// Entries of providers that left are kept for RecycleAfter, then dropped at
// the next change of the list.
func TestEntriesRecycled(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	lb, _ := New(warmup.WithClock(clock)).Build(spi.MustParse("consumer://10.0.0.9/demo.Echo"))
	b := lb.(*Balancer)
	var l []spi.Invoker
	for i := range 50 {
		// different weights: equal ones take the counter, no entries (Select)
		l = append(l, spitest.NewStubInvoker(spi.MustParse(fmt.Sprintf("airnode://10.0.0.%d:20880/demo.Echo?weight=%d", i+1, i+1)), nil))
	}
	inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo"}
	b.Select(l, inv)
	st := b.state(inv)
	if n := len(st.entries); n != 50 {
		t.Fatalf("%d entries, want 50", n)
	}
	b.Select(l[10:13], inv)
	if n := len(st.entries); n != 50 {
		t.Fatalf("%d entries just after 47 providers left, want 50", n)
	}
	mu.Lock()
	now = now.Add(RecycleAfter)
	mu.Unlock()
	b.Select(l[10:13], inv) // same list: no change, nothing recycled yet
	b.Select(l[10:14], inv)
	if n := len(st.entries); n != 4 {
		t.Fatalf("%d entries %v after 46 providers left, want 4", n, RecycleAfter)
	}
}
