package p2c_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hanger is a provider's service whose handler blocks, while a test makes
// it hang, until the hang ends or the call's context does; it counts the
// calls that enter it.
type hanger struct {
	until atomic.Int64 // UnixNano the hang ends at; 0: no hang
	calls atomic.Int64

	mu    sync.Mutex
	since time.Time       // when to start noting the calls' arrival
	at    []time.Duration // their arrival since then, the first 200
}

func (h *hanger) Who(ctx context.Context) (string, error) {
	h.calls.Add(1)
	h.mu.Lock()
	if !h.since.IsZero() && len(h.at) < 200 {
		h.at = append(h.at, time.Since(h.since).Round(time.Millisecond))
	}
	h.mu.Unlock()
	if d := time.Until(time.Unix(0, h.until.Load())); d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	return "ok", nil
}

// TestT25_N4_RecoveredProviderTakenBack: tester25 N4. Three providers,
// eight callers, p2c with its defaults (p2c.decay 10s, timeout 1s). One
// provider's handler blocks for 6 s, so its calls time out and its
// estimate soars (round trip + timeout); meanwhile it gets at most a
// probe now and then. With outlier ejection off, p2c alone must take it
// back: it gets calls within 5 s of answering again (with the estimate
// decaying toward 0 alone: none for ~40 s; with the probes: at most one
// stale period and one timeout, 2 s). With the defaults the kernel's
// outlier ejection also leaves it out for 5 s after its fifth timeout,
// which may come just before it recovers (probes time out too), so the
// bound there is 7 s. Then a share (over 10 % of the calls of a second)
// within 10 s: on a quiet machine a third or more within 1-4 s; on one
// starved of CPU (-race, other tests) every estimate holds round trips of
// 100-300 ms that fade over p2c.decay, and a provider with a recent peak
// gets 10-15 % for seconds, recovered or not.
func TestT25_N4_RecoveredProviderTakenBack(t *testing.T) {
	for name, tc := range map[string]struct {
		query string
		first time.Duration // bound on the first call after recovery
	}{
		"defaults":    {"loadbalance=p2c", 7 * time.Second},
		"no-ejection": {"loadbalance=p2c&outlier.consecutive=0", 5 * time.Second},
	} {
		t.Run(name, func(t *testing.T) { recoveredTakenBack(t, tc.query, tc.first) })
	}
}

func recoveredTakenBack(t *testing.T, query string, within time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := newCluster(t)
	hs := []*hanger{{}, {}, {}}
	for _, h := range hs {
		c.provider(ctx, h, "")
	}
	ref := c.refer(ctx, query, 3)
	failed, stop := keepCalling(ctx, ref, 8)
	defer stop()
	time.Sleep(500 * time.Millisecond) // every provider has an estimate
	s, n := sharesOver(hs, time.Second)
	t.Logf("all answering: shares %.1f %% / %.1f %% / %.1f %% of %d calls in a second", 100*s[0], 100*s[1], 100*s[2], n)
	sick := hs[0]
	if sick.calls.Load() == 0 {
		t.Fatal("the provider to hang got no call while it answered: the test proves nothing")
	}

	const hang = 6 * time.Second
	start := time.Now()
	sick.mu.Lock()
	sick.since = start
	sick.mu.Unlock()
	defer func() {
		sick.mu.Lock()
		defer sick.mu.Unlock()
		t.Logf("calls to the hanging provider arrived at %v after it started hanging (the first 30)", sick.at[:min(30, len(sick.at))])
	}()
	sick.until.Store(start.Add(hang).UnixNano())
	time.Sleep(time.Until(start.Add(hang)))
	probes := 0 // calls that arrived from 2 s in, once those in flight had timed out
	sick.mu.Lock()
	for _, at := range sick.at {
		if at >= 2*time.Second && at < hang {
			probes++
		}
	}
	sick.mu.Unlock()
	t.Logf("hanging: %d calls in its last 4 s, %d calls failed so far", probes, failed.Load())
	if probes > 8 {
		t.Errorf("the hanging provider got %d calls in its last 4 s of hanging, want at most a probe now and then (≤ 8)", probes)
	}

	healed := time.Now()
	base := sick.calls.Load()
	for sick.calls.Load() == base {
		if time.Since(healed) > within {
			t.Fatalf("the recovered provider got no call within %v of recovering (%d calls failed)", within, failed.Load())
		}
		time.Sleep(time.Millisecond)
	}
	first := time.Since(healed)
	for {
		s, n := sharesOver(hs, time.Second)
		if s[0] > 0.10 {
			t.Logf("recovered: first call %v after; %.1f %% / %.1f %% / %.1f %% of the %d calls of the second ending %v after", first.Round(time.Millisecond), 100*s[0], 100*s[1], 100*s[2], n, time.Since(healed).Round(10*time.Millisecond))
			break
		}
		if time.Since(healed) > first+10*time.Second {
			t.Fatalf("the recovered provider (first call %v after) got %.1f %% of the %d calls 9-10 s after its first, want > 10 %%", first.Round(time.Millisecond), 100*s[0], n)
		}
	}
}

// sharesOver returns the share of the calls each of the three providers
// got over the next d, and their number.
func sharesOver(hs []*hanger, d time.Duration) (s [3]float64, n int64) {
	var before [3]int64
	for i, h := range hs {
		before[i] = h.calls.Load()
	}
	time.Sleep(d)
	var got [3]int64
	for i, h := range hs {
		got[i] = h.calls.Load() - before[i]
		n += got[i]
	}
	for i := range got {
		s[i] = float64(got[i]) / float64(max(n, 1))
	}
	return s, n
}
