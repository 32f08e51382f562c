package activelimit_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/extensions/filter/activelimit"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestBuildChecksKeys(t *testing.T) {
	for _, q := range []string{"actives=-1", "actives=a", "methods.M.actives=2000000", "actives=1&timeout=abc"} {
		_, err := activelimit.Builder{}.Build(spi.MustParse("airnode://h:1/s?" + q))
		if err == nil || !strings.HasPrefix(err.Error(), "activelimit: ") {
			t.Errorf("%s: err = %v", q, err)
		}
	}
	a := activelimit.Builder{}.Activation()
	if a.Key != "actives" || len(a.Sides) != 1 || a.Sides[0] != spi.Consumer || !a.PerProvider {
		t.Errorf("activation %+v", a)
	}
}

// A call beyond the limit waits for a slot: it runs when one frees before
// the timeout, and fails with CLIENT_TIMEOUT, without calling next, when
// none does.
func TestWaitsThenTimesOut(t *testing.T) {
	f, err := activelimit.Builder{}.Build(spi.MustParse("airnode://h:1/s?actives=1&timeout=2s&methods.Short.timeout=100ms&methods.Short.actives=1"))
	if err != nil {
		t.Fatal(err)
	}
	hold := make(chan struct{})
	entered := make(chan struct{}, 8)
	next := spitest.NewStubInvoker(spi.MustParse("airnode://h:1/s"), func(ctx context.Context, inv *spi.Invocation) spi.Result {
		entered <- struct{}{}
		<-hold
		return spi.Result{Value: 1}
	})
	ctx := context.Background()
	var wg sync.WaitGroup
	for _, m := range []string{"Long", "Short"} {
		wg.Add(1)
		go func() { defer wg.Done(); f.Invoke(ctx, next, &spi.Invocation{Service: "s", Method: m}) }()
		<-entered
	}
	// Short: its one slot is taken; the wait ends at 100 ms.
	start := time.Now()
	res := f.Invoke(ctx, next, &spi.Invocation{Service: "s", Method: "Short"})
	if !errors.Is(res.Err, spi.ErrClientTimeout) || !strings.Contains(res.Err.Error(), "actives=1") || time.Since(start) < 90*time.Millisecond {
		t.Fatalf("Short: %v after %v", res.Err, time.Since(start))
	}
	// The caller's deadline ends a wait too.
	dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	res = f.Invoke(dctx, next, &spi.Invocation{Service: "s", Method: "Long"})
	cancel()
	if !errors.Is(res.Err, spi.ErrClientTimeout) || !strings.Contains(res.Err.Error(), "deadline") {
		t.Fatalf("Long with deadline: %v", res.Err)
	}
	// Cancellation is CLIENT_ERROR.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if res = f.Invoke(cctx, next, &spi.Invocation{Service: "s", Method: "Long"}); !errors.Is(res.Err, spi.ErrClientError) {
		t.Fatalf("Long cancelled: %v", res.Err)
	}
	// Long: waits (timeout 2s) and gets the slot when the first call ends.
	done := make(chan spi.Result, 1)
	go func() { done <- f.Invoke(ctx, next, &spi.Invocation{Service: "s", Method: "Long"}) }()
	time.Sleep(20 * time.Millisecond)
	close(hold)
	select {
	case res := <-done:
		if res.Err != nil {
			t.Fatalf("waiting Long: %v", res.Err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiting Long never ran")
	}
	wg.Wait()
}

func TestNoLimitPassesThrough(t *testing.T) {
	f, err := activelimit.Builder{}.Build(spi.MustParse("airnode://h:1/s?actives=0"))
	if err != nil {
		t.Fatal(err)
	}
	next := spitest.NewStubInvoker(spi.MustParse("airnode://h:1/s"), nil)
	for range 3 {
		if res := f.Invoke(context.Background(), next, &spi.Invocation{Service: "s", Method: "M"}); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
}

// tester82 #8: a call that gave up waiting says what happened: calls did
// finish during its wait, and their slots went to other waiters ("1
// calls in flight ... and none finished" said otherwise, ungrammatically).
func TestRefusalSaysSlotsWentToOtherWaiters(t *testing.T) {
	f, err := activelimit.Builder{}.Build(spi.MustParse("airnode://h:1/s?actives=1&timeout=1s"))
	if err != nil {
		t.Fatal(err)
	}
	hold := make(chan struct{})
	entered := make(chan struct{}, 8)
	next := spitest.NewStubInvoker(spi.MustParse("airnode://h:1/s"), func(ctx context.Context, inv *spi.Invocation) spi.Result {
		entered <- struct{}{}
		<-hold
		return spi.Result{Value: 1}
	})
	inv := &spi.Invocation{Service: "t.Act", Method: "Work"}
	first := make(chan spi.Result, 1)
	go func() { first <- f.Invoke(context.Background(), next, inv) }()
	<-entered
	// Two waiters; the first call ends while both wait: one takes its
	// slot (and holds it), the other gives up at 1 s.
	waiters := make(chan spi.Result, 2)
	for range 2 {
		go func() { waiters <- f.Invoke(context.Background(), next, inv) }()
	}
	time.Sleep(200 * time.Millisecond) // both are waiting
	hold <- struct{}{}
	<-first
	<-entered
	res := <-waiters
	close(hold)
	<-waiters
	want := "activelimit: t.Act.Work: no slot of actives=1 came free for this call within its timeout of 1s (1 call in flight; 1 finished meanwhile and went to other waiters)"
	if !errors.Is(res.Err, spi.ErrClientTimeout) || !strings.Contains(res.Err.Error(), want) {
		t.Fatalf("gave up with %v; want CLIENT_TIMEOUT %q", res.Err, want)
	}
	// No call finished during the wait: it says so.
	hold2 := make(chan struct{})
	next2 := spitest.NewStubInvoker(spi.MustParse("airnode://h:1/s"), func(ctx context.Context, inv *spi.Invocation) spi.Result {
		entered <- struct{}{}
		<-hold2
		return spi.Result{Value: 1}
	})
	f, _ = activelimit.Builder{}.Build(spi.MustParse("airnode://h:1/s?actives=2&timeout=100ms"))
	for range 2 {
		go f.Invoke(context.Background(), next2, inv)
		<-entered
	}
	res = f.Invoke(context.Background(), next2, inv)
	close(hold2)
	want = "no slot of actives=2 came free for this call within its timeout of 100ms (2 calls in flight; none finished meanwhile)"
	if !strings.Contains(res.Err.Error(), want) {
		t.Fatalf("gave up with %v; want %q", res.Err, want)
	}
}
