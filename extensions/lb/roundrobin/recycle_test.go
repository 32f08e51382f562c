package roundrobin

import (
	"fmt"
	"testing"

	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// Entries of providers that left are dropped on the next Select.
func TestEntriesRecycled(t *testing.T) {
	lb, _ := Builder{}.Build(spi.MustParse("consumer://10.0.0.9/demo.Echo"))
	b := lb.(*Balancer)
	var l []spi.Invoker
	for i := range 50 {
		l = append(l, spitest.NewStubInvoker(spi.MustParse(fmt.Sprintf("airnode://10.0.0.%d:20880/demo.Echo", i+1)), nil))
	}
	inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo"}
	b.Select(l, inv)
	st := b.state(inv)
	if n := len(st.entries); n != 50 {
		t.Fatalf("%d entries, want 50", n)
	}
	b.Select(l[10:13], inv)
	if n := len(st.entries); n != 3 {
		t.Fatalf("%d entries after 47 providers left, want 3", n)
	}
}
