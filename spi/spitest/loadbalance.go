package spitest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// TestLoadBalance runs the load-balancer conformance suite against b. It
// checks that Build accepts a reference URL without balancer keys; that
// Select never returns nil for a non-empty list with a positive weight, and
// only ever returns an invoker of the list; that an invoker with weight 0 is
// never picked and a list whose weights are all 0 gives nil; that providers
// still warming up (timestamp = now) are picked; that Select leaves the
// slice unchanged; that invokers of a non-comparable value type work (no
// panic on == or as a map key); and that concurrent Selects, with calls
// updating Stats at the same time, are race-free (run with -race). A panic
// of Build or Select fails its subtest with the panic's value and stack;
// the other subtests still run.
func TestLoadBalance(t *testing.T, b spi.LoadBalanceBuilder) {
	t.Helper()
	defer catch(t, "load balancer builder")
	if err := clusterCheckName(b.Name()); err != nil {
		t.Fatal(err)
	}
	ref := spi.MustParse("airnode://127.0.0.1:20880/demo.Echo")
	lb, err := b.Build(ref)
	if err != nil {
		t.Fatalf("Build(%s): %v", ref, err)
	}
	list := func(n int, params func(i int) string) []spi.Invoker {
		out := make([]spi.Invoker, n)
		for i := range out {
			q := ""
			if params != nil {
				q = params(i)
			}
			out[i] = NewStubInvoker(spi.MustParse(fmt.Sprintf("airnode://127.0.0.%d:20880/demo.Echo?%s", i+1, q)), nil)
		}
		return out
	}
	inv := func(i int) *spi.Invocation {
		return &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{"key-" + strconv.Itoa(i)}}
	}
	pickAll := func(t *testing.T, lb spi.LoadBalance, l []spi.Invoker, picks int) map[spi.Invoker]int {
		t.Helper()
		got := map[spi.Invoker]int{}
		for i := range picks {
			x := lb.Select(l, inv(i))
			if x == nil {
				t.Fatalf("Select returned nil for %d invokers with positive weights", len(l))
			}
			if !slices.Contains(l, x) {
				t.Fatalf("Select returned %v, not one of the list", x.URL())
			}
			got[x]++
		}
		return got
	}

	run(t, "NeverNil", "load balancer Select", func(t *testing.T) {
		for n := 1; n <= 5; n++ {
			pickAll(t, lb, list(n, nil), 300)
		}
	})
	run(t, "Weights", "load balancer Select", func(t *testing.T) {
		l := list(4, func(i int) string { return "weight=" + strconv.Itoa(1+i*50) })
		pickAll(t, lb, l, 300)
	})
	run(t, "ZeroWeightNeverPicked", "load balancer Select", func(t *testing.T) {
		l := list(4, func(i int) string {
			if i%2 == 0 {
				return "weight=0"
			}
			return ""
		})
		for x := range pickAll(t, lb, l, 1000) {
			if w, _ := x.URL().Param("weight"); w == "0" {
				t.Fatalf("picked %s, which has weight 0", x.URL())
			}
		}
	})
	run(t, "AllZeroWeights", "load balancer Select", func(t *testing.T) {
		l := list(3, func(int) string { return "weight=0" })
		for i := range 50 {
			if x := lb.Select(l, inv(i)); x != nil {
				t.Fatalf("Select returned %s although every weight is 0; want nil", x.URL())
			}
		}
	})
	run(t, "WarmingUp", "load balancer Select", func(t *testing.T) {
		now := strconv.FormatInt(time.Now().UnixMilli(), 10)
		l := list(3, func(int) string { return "warmup=10m&timestamp=" + now })
		pickAll(t, lb, l, 300)
	})
	run(t, "SliceUnchanged", "load balancer Select", func(t *testing.T) {
		l := list(5, nil)
		before := slices.Clone(l)
		pickAll(t, lb, l, 100)
		if !slices.Equal(l, before) {
			t.Fatal("Select modified the invoker slice")
		}
	})
	run(t, "NonComparableInvokers", "load balancer Select", func(t *testing.T) {
		// Invokers need not be pointers: a value type holding a slice cannot
		// be compared with == or used as a map key.
		var l []spi.Invoker
		for i := range 4 {
			u := spi.MustParse(fmt.Sprintf("airnode://127.0.1.%d:20880/demo.Echo", i+1))
			l = append(l, lbValueInvoker{url: u, tags: []string{"v"}, stats: &spi.Stats{}})
		}
		for i := range 200 {
			x := lb.Select(l, inv(i))
			if x == nil {
				t.Fatal("Select returned nil for value-type invokers")
			}
			if !slices.ContainsFunc(l, func(y spi.Invoker) bool { return y.URL().Equal(x.URL()) }) {
				t.Fatalf("Select returned %v, not one of the list", x.URL())
			}
		}
	})
	run(t, "Concurrent", "load balancer Select", func(t *testing.T) {
		l := list(6, func(i int) string { return "weight=" + strconv.Itoa(10*(i+1)) })
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				defer catch(t, "load balancer Select")
				for i := range 500 {
					x := lb.Select(l, inv(g*1000+i))
					if x == nil || !slices.Contains(l, x) {
						t.Error("Select returned nil or a foreign invoker under concurrency")
						return
					}
					x.Stats().Begin()
					x.Stats().End(time.Microsecond, i%7 != 0)
				}
			})
		}
		wg.Wait()
	})
}

// lbValueInvoker is an invoker of a non-comparable value type.
type lbValueInvoker struct {
	url   spi.URL
	tags  []string
	stats *spi.Stats
	err   error // returned by Invoke
}

func (v lbValueInvoker) URL() spi.URL { return v.url }
func (v lbValueInvoker) Invoke(context.Context, *spi.Invocation) spi.Result {
	if v.err != nil {
		return spi.Result{Err: v.err}
	}
	return spi.Result{Value: v.tags}
}
func (v lbValueInvoker) Available() bool   { return true }
func (v lbValueInvoker) Stats() *spi.Stats { return v.stats }
func (v lbValueInvoker) Close() error      { return nil }
