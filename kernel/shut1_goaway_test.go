package kernel

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// nu43 finding 1: a provider that is its consumer's only provider, called
// by a direct URL under steady load, drains the calls in flight as its
// drain began and then sends the go-away at once. Before, it went on
// running the requests the consumer kept sending (the read-only event
// cannot turn a consumer from its only provider) until shutdown.timeout
// and abandoned those then running: "drained the calls in flight calls=50
// took=130ms", 3 s later "calls abandoned calls=50", 50 SERVER_ERROR. Now
// nothing is abandoned, the calls after the go-away fail CHANNEL_INACTIVE
// "did not run" (safe to retry), and Shutdown returns nil long before the
// timeout.
func TestShut1SteadyConsumerDoesNotHoldTheDrainOpen(t *testing.T) {
	for _, transport := range []string{"tcp", "smux"} {
		t.Run(transport, func(t *testing.T) {
			// A steady consumer holding the drain open would make Shutdown
			// take its whole timeout: 20 s, so that half of it is a bound
			// no loaded machine reaches while the drain ends in ~0.5 s.
			const timeout = 20 * time.Second
			var logs syncBuffer
			p := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))),
				WithShutdownWait(0), WithShutdownTimeout(timeout))
			t.Cleanup(func() { _ = p.Close() })
			e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?transport="+transport))
			if err != nil {
				t.Fatal(err)
			}
			r := referConnected(t, "transport="+transport+"&timeout=10s", e)

			var stop atomic.Bool
			var ok atomic.Int64
			var mu sync.Mutex
			failures := map[string]int{} // status: count
			var wrong []string           // failures other than "not run"
			var wg sync.WaitGroup
			for range 50 {
				wg.Go(func() {
					for !stop.Load() {
						_, err := r.Invoke(context.Background(), "Sleep", 200)
						if err == nil {
							ok.Add(1)
							continue
						}
						mu.Lock()
						failures[spi.StatusOf(err).String()]++
						if spi.StatusOf(err) != spi.StatusChannelInactive || strings.Contains(err.Error(), "may have run") {
							wrong = append(wrong, err.Error())
						}
						mu.Unlock()
						time.Sleep(10 * time.Millisecond) // a caller that backs off a little
					}
				})
			}
			eventually(t, "50 calls running", func() bool { return ok.Load() >= 50 })

			start := time.Now()
			err = p.Shutdown(ctxT(t))
			took := time.Since(start)
			stop.Store(true)
			wg.Wait()
			if err != nil {
				t.Errorf("Shutdown = %v; want nil: the calls read before the go-away end in 200 ms", err)
			}
			// the drain (200 ms), the calls read during it (200 ms), the
			// go-away's ping: well under the timeout it used to reach
			if took > timeout/2 {
				t.Errorf("Shutdown took %v; want well under its %v timeout", took, timeout)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(wrong) > 0 {
				t.Errorf("%d calls failed other than CHANNEL_INACTIVE not run (%v); first: %s", len(wrong), failures, wrong[0])
			}
			log := logs.String()
			if !strings.Contains(log, `msg="drained the calls in flight"`) || strings.Contains(log, "abandon") {
				t.Errorf("provider log: want the drained line and nothing abandoned:\n%s", log)
			}
			t.Logf("Shutdown took %v; %d calls ok, failures %v", took.Round(time.Millisecond), ok.Load(), failures)
		})
	}
}

// The exchange's GoAway is idempotent and counts the requests still
// running as it is sent; a request read after it is answered not run.
func TestShut1GoAwayCountsRunningAndRefusesLater(t *testing.T) {
	_, e := provider(t)
	r := referConnected(t, "transport=smux&timeout=5s&retries=0", e)
	srv := e.srv.srv
	done := make(chan error, 1)
	go func() {
		_, err := r.Invoke(ctxT(t), "Sleep", 300)
		done <- err
	}()
	eventually(t, "the Sleep running", func() bool { return srv.InFlight() == 1 })
	if n := srv.GoAway(); n != 1 {
		t.Errorf("GoAway = %d running; want 1", n)
	}
	if n := srv.GoAway(); n != 1 {
		t.Errorf("second GoAway = %d running; want 1", n)
	}
	if err := <-done; err != nil {
		t.Errorf("the call read before the go-away: %v; want it run", err)
	}
	_, err := r.Invoke(ctxT(t), "Echo", "x")
	if spi.StatusOf(err) != spi.StatusChannelInactive || strings.Contains(err.Error(), "may have run") {
		t.Errorf("call after the go-away: %v; want CHANNEL_INACTIVE, not run", err)
	}
	t.Logf("after the go-away: %v", err)
}
