package clusterkit

import (
	"context"
	"fmt"
	"slices"
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
	got := MethodsSetting(u, "retries")
	slices.Sort(got)
	if fmt.Sprint(got) != "[Fail Sleep]" {
		t.Fatalf("got %v, want [Fail Sleep] (Info is not in methods)", got)
	}
	// Without "methods", Dubbo's "<m>.<key>" counts for an exported Go
	// method name only: "heartbeat.retries" is the heartbeat's key and
	// "connect.timeout" no method's.
	u = spi.MustParse("consumer://h/demo.Echo?Slow.retries=0&heartbeat.retries=5&Fast.idempotent=true&methods.Echo.retries=1&retries=4&a.B.retries=1&.retries=2")
	if got := fmt.Sprint(MethodsSetting(u, "retries", "idempotent")); got != "[Fast Slow Echo]" {
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
