package failover_test

import (
	"context"
	"testing"

	"github.com/airnode/airnode/extensions/cluster/failover"
	"github.com/airnode/airnode/spi"
)

// nop answers at once and records nothing.
type nop struct{ u spi.URL }

func (n nop) URL() spi.URL                                       { return n.u }
func (n nop) Invoke(context.Context, *spi.Invocation) spi.Result { return spi.Result{Value: "ok"} }
func (n nop) Available() bool                                    { return true }
func (n nop) Stats() *spi.Stats                                  { return nil }
func (n nop) Close() error                                       { return nil }

// fixedDir lists the same invokers on every call, without allocating.
type fixedDir struct {
	u spi.URL
	l []spi.Invoker
}

func (d *fixedDir) URL() spi.URL                       { return d.u }
func (d *fixedDir) List(*spi.Invocation) []spi.Invoker { return d.l }
func (d *fixedDir) Registry() string                   { return "direct" }

// BenchmarkFirstTry measures a call that succeeds on its first provider:
// the path every healthy call takes, which allocates nothing (no tried
// set before a failure), without and with a retry budget (whose full
// bucket costs the call one atomic load):
//
//	go test -run XXX -bench FirstTry -benchmem ./extensions/cluster/failover
func BenchmarkFirstTry(b *testing.B) {
	for _, q := range []string{"", "?retry.tokens=10"} {
		b.Run("budget="+map[string]string{"": "off", "?retry.tokens=10": "10"}[q], func(b *testing.B) {
			ref := spi.MustParse("consumer://10.0.0.9/demo.Echo" + q)
			c, err := failover.Builder{}.Build(ref)
			if err != nil {
				b.Fatal(err)
			}
			dir := &fixedDir{ref, []spi.Invoker{nop{spi.MustParse("airnode://10.0.0.1:20880/demo.Echo")}, nop{spi.MustParse("airnode://10.0.0.2:20880/demo.Echo")}}}
			inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo"}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if res := c.Invoke(ctx, inv, dir, firstLB{}); res.Err != nil {
					b.Fatal(res.Err)
				}
			}
		})
	}
}

// TestFirstTryAllocatesNothing guards BenchmarkFirstTry's claim, with and
// without a retry budget.
func TestFirstTryAllocatesNothing(t *testing.T) {
	for _, q := range []string{"", "?retry.tokens=10"} {
		ref := spi.MustParse("consumer://10.0.0.9/demo.Echo" + q)
		c, err := failover.Builder{}.Build(ref)
		if err != nil {
			t.Fatal(err)
		}
		dir := &fixedDir{ref, []spi.Invoker{nop{spi.MustParse("airnode://10.0.0.1:20880/demo.Echo")}}}
		inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo"}
		if a := testing.AllocsPerRun(100, func() { c.Invoke(context.Background(), inv, dir, firstLB{}) }); a != 0 {
			t.Errorf("%q: %v allocations per successful first try, want 0", q, a)
		}
	}
}

// refusing fails every call with a failure that did not run, so that
// failover retries; a pointer, as the kernel's provider invokers are.
type refusing struct{ u spi.URL }

func (n *refusing) URL() spi.URL { return n.u }
func (n *refusing) Invoke(context.Context, *spi.Invocation) spi.Result {
	return spi.Result{Err: busy}
}
func (n *refusing) Available() bool   { return true }
func (n *refusing) Stats() *spi.Stats { return nil }
func (n *refusing) Close() error      { return nil }

var busy = &spi.Error{Status: spi.StatusServerThreadpoolExhausted, Message: "busy"}

// BenchmarkRetry measures a call whose first provider refuses it
// (SERVER_THREADPOOL_EXHAUSTED) and whose second answers: the failure
// path, where the retry policy is resolved (the provider's retries and
// idempotent, when the reference sets neither):
//
//	go test -run XXX -bench Retry -benchmem ./extensions/cluster/failover
func BenchmarkRetry(b *testing.B) {
	ref := spi.MustParse("consumer://10.0.0.9/demo.Echo")
	c, err := failover.Builder{}.Build(ref)
	if err != nil {
		b.Fatal(err)
	}
	dir := &fixedDir{ref, []spi.Invoker{&refusing{spi.MustParse("airnode://10.0.0.1:20880/demo.Echo?retries=3")}, nop{spi.MustParse("airnode://10.0.0.2:20880/demo.Echo")}}}
	inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res := c.Invoke(ctx, inv, dir, firstLB{}); res.Err != nil {
			b.Fatal(res.Err)
		}
	}
}
