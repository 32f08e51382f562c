package kernel

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/spi"
)

// tester25 N1: a large request crossing a slow link, with short calls
// timing out behind it on the same connection, through a Node's
// reference (the liveness check's ping waits behind the request too): the
// check must see the provider acknowledging the request's bytes, which a
// wrapper of the kernel's hid (guardedSession lacked spi.AckCounter), and
// keep the connection. Before: cut every 1.3-1.6 s, the upload lost.
func TestT25_N1_SlowUploadThroughANode(t *testing.T) {
	p := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	t.Cleanup(func() { _ = p.Close() })
	e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?transport=tcp"))
	if err != nil {
		t.Fatal(err)
	}
	px := testproxy.New(t, e.URL().Address())
	px.SetRate(1<<20, 0) // 1 MiB/s toward the provider
	c := consumer(t)
	r := refer(t, c, "airnode://"+px.Addr()+"/demo.Echo?transport=tcp&timeout=300ms&methods.Echo.timeout=20s")
	if _, err := r.Invoke(ctxT(t), "Info"); err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, _ = r.Invoke(ctxT(t), "Info") // times out behind the upload
			}
		})
	}
	start := time.Now()
	_, err = r.Invoke(ctxT(t), "Echo", strings.Repeat("x", 3<<20))
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("3 MiB request over 1 MiB/s after %v: %v", time.Since(start).Round(time.Millisecond), err)
	}
	t.Logf("3 MiB request over 1 MiB/s in %v", time.Since(start).Round(time.Millisecond))
}

// tester25 N3: after WaitReady saw a provider's first attempt fail (it
// accepts and never answers the first ping), the call right after made a
// second attempt and waited for it again (airnode call took twice
// connect.timeout, and with a short timeout lost the first attempt's
// diagnosis). A call-asked redial waits minRedialGap after a failed
// attempt too: the call fails at once with that attempt's error.
func TestT25_N3_NoSecondAttemptRightAfterWaitReady(t *testing.T) {
	_, e := provider(t)
	px := testproxy.New(t, e.URL().Address())
	px.BlackHole()
	r := refer(t, consumer(t), "airnode://"+px.Addr()+"/demo.Echo?timeout=5s&connect.timeout=300ms")
	if r.WaitReady(ctxT(t)) {
		t.Fatal("WaitReady: true for a provider that never answers")
	}
	start := time.Now()
	_, err := r.Invoke(ctxT(t), "Echo", "x")
	if d := time.Since(start); d > 200*time.Millisecond || !errors.Is(err, spi.ErrNotConnected) || !strings.Contains(err.Error(), "first ping") {
		t.Fatalf("call after %v: %v; want at once the first attempt's error (first ping, not connected)", d.Round(time.Millisecond), err)
	}
}
