package clusterkit

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

type valueInvoker struct {
	u    spi.URL
	tags []string
}

func (v valueInvoker) URL() spi.URL                                       { return v.u }
func (v valueInvoker) Invoke(context.Context, *spi.Invocation) spi.Result { return spi.Result{} }
func (v valueInvoker) Available() bool                                    { return true }
func (v valueInvoker) Stats() *spi.Stats                                  { return nil }
func (v valueInvoker) Close() error                                       { return nil }

func TestSameAndExclude(t *testing.T) {
	u := func(i int) spi.URL { return spi.MustParse(fmt.Sprintf("airnode://10.0.0.%d:20880/demo.Echo", i)) }
	a, b := spitest.NewStubInvoker(u(1), nil), spitest.NewStubInvoker(u(2), nil)
	va, vb := valueInvoker{u: u(1), tags: []string{"x"}}, valueInvoker{u: u(2)}
	if !Same(a, a) || Same(a, b) || Same(a, va) || !Same(va, valueInvoker{u: u(1)}) || Same(va, vb) {
		t.Fatal("Same")
	}
	l := []spi.Invoker{a, b, va, vb}
	if got := Exclude(l, nil); !slices.Equal(got[:2], l[:2]) || len(got) != 4 {
		t.Fatal("Exclude(nil) must return the list")
	}
	if got := Exclude(l, []spi.Invoker{b, va}); len(got) != 2 || got[0] != a || !Same(got[1], vb) {
		t.Fatalf("Exclude: %v", got)
	}
	if got := Exclude(l, l); len(got) != 0 {
		t.Fatalf("Exclude(all): %v", got)
	}
}

func TestMethodsSetting(t *testing.T) {
	u := spi.MustParse("consumer://h/demo.Echo?methods=Echo,Sleep&Sleep.retries=1&methods.Fail.retries=0&methods.Echo.forks=3&retries=4&Info.retries=9")
	got := u.MethodsSetting("retries")
	slices.Sort(got)
	if fmt.Sprint(got) != "[Fail Sleep]" {
		t.Fatalf("got %v, want [Fail Sleep] (Info is not in methods)", got)
	}
	// Without "methods", Dubbo's "<m>.<key>" counts for an exported Go
	// method name only: "heartbeat.retries" is the heartbeat's key and
	// "connect.timeout" no method's.
	u = spi.MustParse("consumer://h/demo.Echo?Slow.retries=0&heartbeat.retries=5&Fast.idempotent=true&methods.Echo.retries=1&retries=4&a.B.retries=1&.retries=2")
	if got := fmt.Sprint(u.MethodsSetting("retries", "idempotent")); got != "[Fast Slow Echo]" {
		t.Fatalf("no methods: got %v, want [Fast Slow Echo] (key order)", got)
	}
}

func TestNoProvider(t *testing.T) {
	dir := spitest.NewStubDirectory(spi.MustParse("consumer://h/demo.Echo?group=g&version=1.0"), "zookeeper://127.0.0.1:2181")
	e := NoProvider(&spi.Invocation{Method: "Echo"}, dir, "")
	if e.Status != spi.StatusServiceNotFound || e.Error() != "SERVICE_NOT_FOUND: no provider available for g/demo.Echo:1.0 (registry: zookeeper://127.0.0.1:2181)" {
		t.Fatalf("got %q", e)
	}
	e = NoProvider(&spi.Invocation{Service: "demo.Echo", Method: "Echo"}, dir, "all 2 providers have weight 0")
	if e.Error() != "SERVICE_NOT_FOUND: no provider available for demo.Echo (registry: zookeeper://127.0.0.1:2181): all 2 providers have weight 0" {
		t.Fatalf("got %q", e)
	}
}

// allDirectory is a directory that lists every provider (All), connected
// or not, as the kernel's does.
type allDirectory struct {
	spi.Directory
	all []spi.Invoker
}

func (d allDirectory) All() []spi.Invoker { return d.all }

// Tester8: with three providers at weight 0 the message counted the
// connections up so far ("all 2 providers", "all 1 providers").
func TestNoneSelectedCountsEveryProvider(t *testing.T) {
	u := func(i int, w string) spi.URL {
		return spi.MustParse(fmt.Sprintf("airnode://10.0.0.%d:20880/demo.Echo?weight=%s", i, w))
	}
	zero := []spi.Invoker{valueInvoker{u: u(1, "0")}, valueInvoker{u: u(2, "0")}, valueInvoker{u: u(3, "0")}}
	stub := spitest.NewStubDirectory(spi.MustParse("consumer://h/demo.Echo"), "file:///r")
	inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo"}
	if e := NoneSelected(inv, allDirectory{stub, zero}, nil, zero[:1]); !strings.HasSuffix(e.Error(), ": all 3 providers have weight 0") {
		t.Errorf("one of three connected: %q, want all 3", e)
	}
	mixed := append(zero[:2:2], valueInvoker{u: u(3, "100")})
	if e := NoneSelected(inv, allDirectory{stub, mixed}, nil, mixed[:2]); !strings.HasSuffix(e.Error(), ": all 2 connected providers have weight 0 (1 more not connected yet)") {
		t.Errorf("the third, weighted, not connected: %q", e)
	}
	if e := NoneSelected(inv, stub, nil, zero[:2]); !strings.HasSuffix(e.Error(), ": all 2 providers have weight 0") {
		t.Errorf("a directory without All: %q", e)
	}
	// tester61: one provider is "the only provider", not "all 1 providers".
	if e := NoneSelected(inv, stub, nil, zero[:1]); !strings.HasSuffix(e.Error(), ": the only provider has weight 0") {
		t.Errorf("one provider: %q", e)
	}
	if e := NoneSelected(inv, allDirectory{stub, zero[:1]}, nil, zero[:1]); !strings.HasSuffix(e.Error(), ": the only provider has weight 0") {
		t.Errorf("one provider listed: %q", e)
	}
	oneZero := []spi.Invoker{zero[0], valueInvoker{u: u(3, "100")}}
	if e := NoneSelected(inv, allDirectory{stub, oneZero}, nil, oneZero[:1]); !strings.HasSuffix(e.Error(), ": the only connected provider has weight 0 (1 more not connected yet)") {
		t.Errorf("one connected at weight 0, one weighted not connected: %q", e)
	}
	// tester11: a balancer that picks nothing out of a retry's list (the
	// providers not tried yet) is named with what it was offered and what
	// the directory lists, not only "out of 1".
	weighted := []spi.Invoker{valueInvoker{u: u(1, "100")}, valueInvoker{u: u(2, "100")}, valueInvoker{u: u(3, "100")}, valueInvoker{u: u(4, "100")}}
	if e := NoneSelected(inv, allDirectory{stub, weighted}, nil, weighted[3:]); !strings.HasSuffix(e.Error(), "returned no provider out of the 1 offered (4 providers listed)") {
		t.Errorf("nil pick on a retry: %q", e)
	}
}

// foreignLB returns an invoker it was not offered.
type foreignLB struct{ x spi.Invoker }

func (f foreignLB) Select([]spi.Invoker, *spi.Invocation) spi.Invoker { return f.x }

// tester64 finding 1: an invoker a balancer returns from outside its list
// was called, bypassing the directory (the call "succeeded" with an
// unfilled reply). Select refuses it, CLIENT_ERROR naming the balancer;
// one of the list, by == or (for a type that is not comparable) by Same,
// is returned.
func TestSelectRefusesAForeignInvoker(t *testing.T) {
	u := func(i int) spi.URL { return spi.MustParse(fmt.Sprintf("airnode://10.0.0.%d:20880/demo.Echo", i)) }
	a, b := spitest.NewStubInvoker(u(1), nil), spitest.NewStubInvoker(u(2), nil)
	dir := spitest.NewStubDirectory(spi.MustParse("consumer://h/demo.Echo?loadbalance=acme.foreign"), "memory://")
	inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo"}
	list := []spi.Invoker{a, b}
	if x, err := Select(context.Background(), foreignLB{b}, dir, list, inv); x != b || err != nil {
		t.Fatalf("one of the list: %v, %v", x, err)
	}
	vl := []spi.Invoker{valueInvoker{u: u(1), tags: []string{"x"}}}
	if x, err := Select(context.Background(), foreignLB{valueInvoker{u: u(1)}}, dir, vl, inv); x == nil || err != nil {
		t.Fatalf("a value invoker of the list (not comparable): %v, %v", x, err)
	}
	x, err := Select(context.Background(), foreignLB{spitest.NewStubInvoker(u(9), nil)}, dir, list, inv)
	want := "balancer acme.foreign returned an invoker that is not among the 2 offered (10.0.0.9:20880)"
	if x != nil || spi.StatusOf(err) != spi.StatusClientError || !strings.Contains(err.Error(), want) {
		t.Fatalf("foreign: %v, %v; want CLIENT_ERROR %q", x, err, want)
	}
}
