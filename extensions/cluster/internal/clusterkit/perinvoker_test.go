package clusterkit

import (
	"context"
	"fmt"
	"testing"

	"github.com/airnode/airnode/spi"
)

// ptrInvoker is a provider invoker that is a pointer, as the kernel's are.
type ptrInvoker struct{ u spi.URL }

func (p *ptrInvoker) URL() spi.URL                                       { return p.u }
func (p *ptrInvoker) Invoke(context.Context, *spi.Invocation) spi.Result { return spi.Result{} }
func (p *ptrInvoker) Available() bool                                    { return true }
func (p *ptrInvoker) Stats() *spi.Stats                                  { return nil }
func (p *ptrInvoker) Close() error                                       { return nil }

// valInvoker is one that is not comparable (its URL holds a map).
type valInvoker struct{ u spi.URL }

func (v valInvoker) URL() spi.URL                                       { return v.u }
func (v valInvoker) Invoke(context.Context, *spi.Invocation) spi.Result { return spi.Result{} }
func (v valInvoker) Available() bool                                    { return true }
func (v valInvoker) Stats() *spi.Stats                                  { return nil }
func (v valInvoker) Close() error                                       { return nil }

// Get parses a pointer invoker's URL once, a non-comparable invoker's on
// every Get (without panicking), and remembers at most MaxPerInvoker.
func TestPerInvokerParsesOncePerPointerInvoker(t *testing.T) {
	var c PerInvoker[string]
	parses := 0
	parse := func(u spi.URL) string { parses++; return u.Address() }
	a := &ptrInvoker{spi.MustParse("airnode://10.0.0.1:1/s")}
	v := valInvoker{spi.MustParse("airnode://10.0.0.2:1/s")}
	for range 3 {
		if got := c.Get(a, parse); got != "10.0.0.1:1" {
			t.Fatalf("Get(a) = %q", got)
		}
		if got := c.Get(v, parse); got != "10.0.0.2:1" {
			t.Fatalf("Get(v) = %q", got)
		}
	}
	if parses != 4 {
		t.Fatalf("%d parses, want 4: a once, v on each of 3 Gets", parses)
	}
	for i := range MaxPerInvoker + 10 {
		c.Get(&ptrInvoker{spi.MustParse(fmt.Sprintf("airnode://10.1.%d.%d:1/s", i/256, i%256))}, parse)
	}
	if n := len(*c.list.Load()); n != MaxPerInvoker {
		t.Fatalf("%d remembered, want MaxPerInvoker (%d)", n, MaxPerInvoker)
	}
}

// BenchmarkPerInvokerHit prices a Get of a remembered invoker among 3,
// the last added (the longest scan):
//
//	go test -run XXX -bench PerInvokerHit ./extensions/cluster/internal/clusterkit
func BenchmarkPerInvokerHit(b *testing.B) {
	var c PerInvoker[int]
	parse := func(spi.URL) int { return 1 }
	var xs []spi.Invoker
	for i := range 3 {
		x := &ptrInvoker{spi.MustParse(fmt.Sprintf("airnode://10.0.0.%d:1/s", i))}
		xs = append(xs, x)
		c.Get(x, parse)
	}
	b.ReportAllocs()
	for b.Loop() {
		if c.Get(xs[2], parse) != 1 {
			b.Fatal("miss")
		}
	}
}
