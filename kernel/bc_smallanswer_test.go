package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// tester81 #1, tester85 #1: on a fresh provider, 50 parallel calls of
// demo.Echo.Sleep(1500) (Sleep(ctx, ms int) (int, error)) with
// timeout=1.8s had about 39 fail SERVER_TIMEOUT: before the connection's
// first answer the exchange counted each running handler at payload in
// the provider's unsent.limit, about 10 at a time. The kernel now tells
// the exchange which methods answer small whatever they are given
// (exchange.Options.SmallAnswer: results of a fixed size), and those
// start at once. On both transports, through the whole provider path
// (registry-free reference, failfast so that no retry hides a failure).
// Before the change 39 of the 50 failed, on each.
func TestSmallAnswer_FreshProviderBurstOfLongCallsAllSucceed(t *testing.T) {
	const calls = 50
	for _, tr := range []string{"smux", "tcp"} {
		t.Run(tr, func(t *testing.T) {
			n := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
			t.Cleanup(func() { _ = n.Close() })
			e, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?transport="+tr))
			if err != nil {
				t.Fatal(err)
			}
			r := referConnected(t, "timeout=1800ms&cluster=failfast&transport="+tr, e)
			var (
				wg   sync.WaitGroup
				mu   sync.Mutex
				errs []error
			)
			start := time.Now()
			for range calls {
				wg.Go(func() {
					if _, err := r.Invoke(context.Background(), "Sleep", 1500); err != nil {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if len(errs) > 0 {
				t.Fatalf("%d of %d parallel Sleep(1500) calls with timeout=1.8s failed on a fresh provider; first: %v", len(errs), calls, errs[0])
			}
			t.Logf("all %d succeeded in %v", calls, time.Since(start).Round(time.Millisecond))
		})
	}
}

// fixedRecord is a result of a fixed, small size.
type fixedRecord struct {
	ID    int64
	Score float64
	Flags [4]bool
	Inner struct{ A, B uint16 }
}

// ownJSON is of a fixed size but encodes itself: anything may come out.
type ownJSON struct{ N int }

func (o ownJSON) MarshalJSON() ([]byte, error) { return json.Marshal(fmt.Sprint(o.N)) }

// Which result types answer small (smallResult): of a fixed size and at
// most exchange.SmallAnswerMax bytes encoded, without an encoding of
// their own.
func TestSmallAnswer_ResultTypes(t *testing.T) {
	for _, c := range []struct {
		v     any
		small bool
	}{
		{0, true}, {int8(0), true}, {uint64(0), true}, {false, true}, {0.5, true}, {complex64(1), true},
		{[16]int32{}, true}, {fixedRecord{}, true}, {struct{}{}, true},
		{[]byte(nil), false}, {"", false}, {new(int), false}, {map[string]int{}, false},
		{struct{ S string }{}, false}, {[2][]int{}, false}, {time.Time{}, false},
		{ownJSON{}, false}, {[1 << 20]byte{}, false}, {[200]int64{}, false},
	} {
		typ := reflect.TypeOf(c.v)
		if got := smallResult(typ); got != c.small {
			t.Errorf("smallResult(%v) = %v, want %v", typ, got, c.small)
		}
	}
	if smallResult(reflect.TypeFor[any]()) {
		t.Error("smallResult(any) = true, want false")
	}
}

// The provider's verdict per request (server.smallAnswer): demo.Echo's
// Sleep (int, error) and Fail (error) answer small; Echo (any), Payload
// ([]byte) and Info (a struct with strings) do not, nor does any method
// of a generic service, nor a service or method not exported.
func TestSmallAnswer_ProviderVerdicts(t *testing.T) {
	n := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	t.Cleanup(func() { _ = n.Close() })
	e, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	inv := spi.InvokerFunc(func(ctx context.Context, inv *spi.Invocation) spi.Result { return spi.Result{Value: 1} })
	if _, err := n.ExportInvoker(ctxT(t), spi.MustParse("airnode://"+e.URL().Address()+"/acme.Generic?methods=Sleep"), inv); err != nil {
		t.Fatal(err)
	}
	n.mu.Lock()
	s := n.servers["smux|"+e.URL().Address()]
	n.mu.Unlock()
	if s == nil {
		t.Fatalf("no server for %s", e.URL().Address())
	}
	for _, c := range []struct {
		service, method string
		small           bool
	}{
		{"demo.Echo", "Sleep", true}, {"demo.Echo", "Fail", true},
		{"demo.Echo", "Echo", false}, {"demo.Echo", "Payload", false}, {"demo.Echo", "Info", false},
		{"demo.Echo", "Slep", false}, {"acme.Generic", "Sleep", false}, {"acme.None", "Sleep", false},
		{HealthService, "Check", false},
	} {
		if got := s.smallAnswer(c.service, c.method); got != c.small {
			t.Errorf("smallAnswer(%q, %q) = %v, want %v", c.service, c.method, got, c.small)
		}
	}
}
