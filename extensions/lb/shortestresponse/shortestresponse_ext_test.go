package shortestresponse_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/lb/shortestresponse"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) { spitest.TestLoadBalance(t, shortestresponse.Builder{}) }

func build(t *testing.T) spi.LoadBalance {
	t.Helper()
	lb, err := shortestresponse.Builder{}.Build(spi.MustParse("consumer://10.0.0.9/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	return lb
}

func stub(i int, params string, fn func(context.Context, *spi.Invocation) spi.Result) *spitest.StubInvoker {
	return spitest.NewStubInvoker(spi.MustParse(fmt.Sprintf("airnode://10.0.0.%d:20880/demo.Echo?%s", i, params)), fn)
}

var echo = &spi.Invocation{Service: "demo.Echo", Method: "Echo"}

func TestBuild(t *testing.T) {
	for _, q := range []string{"", "?shortestresponse.slidePeriod=10s", "?shortestresponse.slidePeriod=5000"} {
		if _, err := (shortestresponse.Builder{}).Build(spi.MustParse("consumer://h/demo.Echo" + q)); err != nil {
			t.Errorf("%q: %v", q, err)
		}
	}
	for _, v := range []string{"soon", "0", "-1s"} {
		_, err := shortestresponse.Builder{}.Build(spi.MustParse("consumer://h/demo.Echo?shortestresponse.slidePeriod=" + v))
		var pe *spi.ParamError
		if !errors.As(err, &pe) || pe.Key != shortestresponse.KeySlidePeriod || pe.Value != v {
			t.Errorf("slidePeriod=%s: got %v, want a ParamError naming key and value", v, err)
		}
	}
}

// A provider that becomes 50 ms slower loses at least 80% of the calls
// within one window (200 ms here, set by the reference URL; 30 s by
// default).
func TestSlowerProviderLosesTraffic(t *testing.T) {
	const period = 200 * time.Millisecond
	var bSlow atomic.Bool
	a := stub(1, "", func(context.Context, *spi.Invocation) spi.Result { time.Sleep(time.Millisecond); return spi.Result{} })
	b := stub(2, "", func(context.Context, *spi.Invocation) spi.Result {
		if bSlow.Load() {
			time.Sleep(51 * time.Millisecond)
		} else {
			time.Sleep(time.Millisecond)
		}
		return spi.Result{}
	})
	l := []spi.Invoker{a, b}
	lb, err := shortestresponse.Builder{}.Build(spi.MustParse("consumer://10.0.0.9/demo.Echo?shortestresponse.slidePeriod=" + period.String()))
	if err != nil {
		t.Fatal(err)
	}

	run := func(d time.Duration) (na, nb int64) {
		var ca, cb atomic.Int64
		stop := time.Now().Add(d)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for time.Now().Before(stop) {
					x := lb.Select(l, echo)
					x.Invoke(context.Background(), echo)
					if x == a {
						ca.Add(1)
					} else {
						cb.Add(1)
					}
				}
			})
		}
		wg.Wait()
		return ca.Load(), cb.Load()
	}
	na, nb := run(400 * time.Millisecond)
	t.Logf("both fast: a %d, b %d", na, nb)
	if na == 0 || nb == 0 {
		t.Fatalf("both fast: a %d, b %d calls; want both used", na, nb)
	}
	bSlow.Store(true)
	run(period) // within one window the slow samples take over
	na, nb = run(time.Second)
	share := float64(na) / float64(na+nb)
	t.Logf("b slower: a %d, b %d (a %.1f%%)", na, nb, 100*share)
	if share < 0.8 {
		t.Fatalf("after b became 50 ms slower a got %.1f%% of the calls, want >= 80%%", 100*share)
	}
}

func TestActiveCounts(t *testing.T) {
	a, b := stub(1, "", nil), stub(2, "", nil)
	for _, x := range []*spitest.StubInvoker{a, b} {
		x.Stats().Begin()
		x.Stats().End(10*time.Millisecond, true) // mean 10ms each
	}
	// a: 10ms × (2+1) = 30ms; b: 10ms × (0+1) = 10ms.
	a.Stats().Begin()
	a.Stats().Begin()
	lb := build(t)
	for range 100 {
		if x := lb.Select([]spi.Invoker{a, b}, echo); x != b {
			t.Fatal("picked the provider with the longer estimate")
		}
	}
}

func TestSelectDoesNotAllocate(t *testing.T) {
	lb := build(t)
	var l []spi.Invoker
	for i := range 10 {
		x := stub(i+1, "", nil)
		x.Invoke(context.Background(), echo)
		l = append(l, x)
	}
	if n := testing.AllocsPerRun(1000, func() { lb.Select(l, echo) }); n != 0 {
		t.Fatalf("Select allocates %v times per call", n)
	}
}

func TestSlidePeriodApplied(t *testing.T) {
	a, b := stub(1, "", nil), stub(2, "", nil)
	lb, err := shortestresponse.Builder{}.Build(spi.MustParse("consumer://10.0.0.9/demo.Echo?shortestresponse.slidePeriod=1500"))
	if err != nil {
		t.Fatal(err)
	}
	lb.Select([]spi.Invoker{a, b}, echo)
	if a.Stats().SlidePeriod != 1500*time.Millisecond || b.Stats().SlidePeriod != 1500*time.Millisecond {
		t.Fatalf("slide periods %v, %v; want 1.5s", a.Stats().SlidePeriod, b.Stats().SlidePeriod)
	}
	// Without the key the kernel's choice stays.
	c := stub(3, "", nil)
	c.Stats().SlidePeriod = time.Minute
	build(t).Select([]spi.Invoker{c}, echo)
	if c.Stats().SlidePeriod != time.Minute {
		t.Fatalf("slide period %v, want 1m (untouched)", c.Stats().SlidePeriod)
	}
}
