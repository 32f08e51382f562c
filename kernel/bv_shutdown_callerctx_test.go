package kernel

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// stuckProvider exports a stubborn t.Stuck (its method never returns
// until the test ends) on a node with shutdown.timeout timeout, and
// starts one call of it from a consumer node, returning once the method
// runs. The consumer's call uses a 20 s timeout.
func stuckProvider(t *testing.T, timeout time.Duration) (p *Node, c *Node, callErr <-chan error) {
	t.Helper()
	svc := &stubborn{started: make(chan struct{}, 1), release: make(chan struct{}), returned: make(chan struct{}, 1)}
	p = NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0), WithShutdownTimeout(timeout))
	t.Cleanup(func() { _ = p.Close() })
	t.Cleanup(func() { close(svc.release) }) // first: p's Close need not wait for the method
	e, err := p.Export(ctxT(t), svc, spi.MustParse("airnode://127.0.0.1:0/t.Stuck"))
	if err != nil {
		t.Fatal(err)
	}
	c = NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownTimeout(timeout))
	t.Cleanup(func() { _ = c.Close() })
	r := refer(t, c, "airnode://"+e.URL().Address()+"/t.Stuck?timeout=20s")
	errc := make(chan error, 1)
	go func() {
		_, err := r.Invoke(context.Background(), "Stuck")
		errc <- err
	}()
	select {
	case <-svc.started:
	case <-time.After(5 * time.Second):
		t.Fatal("the call never reached the method")
	}
	return p, c, errc
}

// fix-bv #1: a Shutdown whose drain the caller's ctx ended (a method that
// never returns, ctx 300 ms, shutdown.timeout 10 s) failed with "kernel:
// shutdown's context ended before its timeout 10s: 1 call still in
// flight was abandoned", which errors.Is(err, context.DeadlineExceeded)
// did not match, unlike Refer's and Export's ends by the caller's ctx
// (fix-bo). It matches now, says so as Refer does, and stays an
// *AbandonedError; a cancelled ctx matches context.Canceled only, a
// ctx's cause matches too; the node's own shutdown.timeout matches
// neither and keeps its words.
func TestBv_ShutdownDrainEndedByTheCallersContext(t *testing.T) {
	t.Run("deadline", func(t *testing.T) {
		p, _, callErr := stuckProvider(t, 10*time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		err := p.Shutdown(ctx)
		t.Logf("Shutdown, 300ms ctx: %v", err)
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			t.Errorf("errors.Is(err, context.DeadlineExceeded) = %v, Canceled %v; want true, false",
				errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled))
		}
		var ab *AbandonedError
		if !errors.As(err, &ab) || ab.Calls != 1 || !ab.ContextEnded || ab.Ctx != context.DeadlineExceeded {
			t.Fatalf("Shutdown = %v; want an *AbandonedError of 1 call, ContextEnded, Ctx DeadlineExceeded", err)
		}
		re := `^kernel: shutdown: 1 call in flight did not return before the caller's context deadline passed, after (2[5-9]\d|3[0-4]\d)ms \(its shutdown timeout is 10s\): it was abandoned$`
		if !regexp.MustCompile(re).MatchString(ab.Error()) {
			t.Errorf("AbandonedError\n%s\ndoes not match\n%s", ab, re)
		}
		if err := <-callErr; err == nil {
			t.Error("the abandoned call succeeded")
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		p, _, _ := stuckProvider(t, 10*time.Second)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(200*time.Millisecond, cancel)
		err := p.Shutdown(ctx)
		t.Logf("Shutdown, cancelled ctx: %v", err)
		if !errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("errors.Is(err, context.Canceled) = %v, DeadlineExceeded %v; want true, false",
				errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded))
		}
		if !strings.Contains(err.Error(), "kernel: shutdown: 1 call in flight did not return before the caller's context was cancelled (its shutdown timeout is 10s): it was abandoned") {
			t.Errorf("error %q does not say the caller's ctx was cancelled", err)
		}
	})
	t.Run("cause", func(t *testing.T) {
		p, _, _ := stuckProvider(t, 10*time.Second)
		mine := errors.New("bv: the operator's deadline")
		ctx, cancel := context.WithTimeoutCause(context.Background(), 300*time.Millisecond, mine)
		defer cancel()
		err := p.Shutdown(ctx)
		if !errors.Is(err, mine) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "ms (cause: bv: the operator's deadline) (its shutdown timeout is 10s)") {
			t.Errorf("Shutdown with a deadline cause: %v; want it to match and name the cause", err)
		}
	})
	t.Run("shutdown.timeout", func(t *testing.T) {
		p, _, _ := stuckProvider(t, 300*time.Millisecond)
		err := p.Shutdown(context.Background())
		t.Logf("Shutdown, shutdown.timeout 300ms: %v", err)
		var ab *AbandonedError
		if !errors.As(err, &ab) || ab.ContextEnded || ab.Ctx != nil ||
			errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			t.Errorf("Shutdown ended by shutdown.timeout: %v; want an *AbandonedError matching no ctx error", err)
		}
		if !strings.Contains(err.Error(), "kernel: shutdown timeout 300ms exceeded: 1 call still in flight was abandoned") || strings.Contains(err.Error(), "caller's context") {
			t.Errorf("error %q; want the shutdown timeout's own words", err)
		}
	})
	// The consumer side: its own calls in flight, cut by its Shutdown's
	// ctx, fail CHANNEL_INACTIVE, and Shutdown's error says the caller's
	// ctx ended their wait, and matches it.
	t.Run("consumer", func(t *testing.T) {
		_, c, callErr := stuckProvider(t, 10*time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		err := c.Shutdown(ctx)
		t.Logf("consumer Shutdown, 300ms ctx: %v", err)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("consumer Shutdown: %v; want it to match context.DeadlineExceeded", err)
		}
		re := `kernel: shutdown: 1 call in flight did not return before the caller's context deadline passed, after (2[5-9]\d|3[0-4]\d)ms: calls on 1 connection failed CHANNEL_INACTIVE \(their providers may have run them\)`
		if err == nil || !regexp.MustCompile(re).MatchString(err.Error()) {
			t.Errorf("consumer Shutdown\n%v\ndoes not match\n%s", err, re)
		}
		if err := <-callErr; spi.StatusOf(err) != spi.StatusChannelInactive {
			t.Errorf("the consumer's call: %v; want CHANNEL_INACTIVE", err)
		}
		// the shutdown.timeout bound keeps its words and matches no ctx error
		_, c2, _ := stuckProvider(t, 300*time.Millisecond)
		err = c2.Shutdown(context.Background())
		if errors.Is(err, context.DeadlineExceeded) || err == nil || !strings.Contains(err.Error(), "its calls in flight were not answered within its shutdown timeout 300ms") {
			t.Errorf("consumer Shutdown bounded by shutdown.timeout: %v; want its words, matching no ctx error", err)
		}
	})
}

// fix-bv #1: a provider connection whose session Close never returns,
// left closing when Shutdown's 1 s ctx ended the drain, said "did not
// return within 1s" and matched no ctx error; it matches the caller's
// deadline now and says so.
func TestBv_ShutdownStuckSessionCloseMatchesTheCallersDeadline(t *testing.T) {
	p, _, _, _ := callOver(t, testCatalogs(t), &faultTransport{name: "bvsc", gate: faultGate(t), sclose: block})
	err := shutdownWithin(t, p)
	wantCallersDeadline(t, "Shutdown", err, `kernel: shutdown: transport "bvsc" session Close \(the connection from \S+ to \S+\) did not return before the caller's context deadline passed, after 1s; stopped waiting for it`)
}

// ...and ended by shutdown.timeout (a bound of the kernel's own), it
// matches no ctx error and gives how long Shutdown waited (it said
// "within 0s").
func TestBv_ShutdownStuckSessionCloseAtShutdownTimeout(t *testing.T) {
	p, _, _, _ := callOver(t, testCatalogs(t), &faultTransport{name: "bvsc", gate: faultGate(t), sclose: block}, WithShutdownTimeout(300*time.Millisecond))
	err := p.Shutdown(context.Background())
	t.Logf("Shutdown, shutdown.timeout 300ms: %v", err)
	var left *LeftRunningError
	if !errors.As(err, &left) || left.Ctx != nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown: %v; want a *LeftRunningError matching no ctx error", err)
	}
	if !regexp.MustCompile(`session Close \(the connection from \S+ to \S+\) did not return within ([3-9]\d\dms|\d+(\.\d)?s); stopped waiting`).MatchString(err.Error()) {
		t.Errorf("error %q; want it to say how long it was waited for (300ms and more)", err)
	}
}
