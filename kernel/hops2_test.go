package kernel

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/spi"
)

// shutdown.timeout is Shutdown's whole budget from its start, the wait
// included, as serve's --shutdown-timeout is from the signal: with a
// 700 ms wait and a 1.2 s budget, a call that ignores the drain is
// abandoned about 1.2 s after Shutdown began (it was 1.9 s: the budget
// bounded only the drain after the wait). The same through the node's
// option and through the export's URL key.
func TestHOps2_ShutdownTimeoutIsTheWholeBudget(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  []Option
		query string
	}{
		{"WithShutdownTimeout", []Option{WithShutdownWait(700 * time.Millisecond), WithShutdownTimeout(1200 * time.Millisecond)}, ""},
		{"URL keys", nil, "?shutdown.wait=700ms&shutdown.timeout=1200ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctxT(t)
			cat := testCatalogs(t)
			// A registry, so that Shutdown waits.
			p := NewNode(cat, append([]Option{WithLogger(quiet), WithRegistry(spi.MustParse("memory://hops2-" + strings.ReplaceAll(tc.name, " ", "")))}, tc.opts...)...)
			defer p.Close()
			svc := &hdrainSvc{started: make(chan struct{}, 1), release: make(chan struct{})}
			defer close(svc.release)
			e, err := p.Export(ctx, svc, spi.MustParse("airnode://127.0.0.1:0/hops2.Svc"+tc.query))
			if err != nil {
				t.Fatal(err)
			}
			if w := p.ShutdownWait(); w != 700*time.Millisecond {
				t.Fatalf("ShutdownWait %v, want 700ms", w)
			}
			c := NewNode(cat, WithLogger(quiet))
			defer c.Close()
			ref := refer(t, c, "airnode://"+e.URL().Address()+"/hops2.Svc?timeout=30s&retries=0")
			long := make(chan error, 1)
			go func() { long <- ref.Call(ctx, "Slow", nil, new(string)) }()
			select {
			case <-svc.started:
			case <-ctx.Done():
				t.Fatal("Slow did not start")
			}
			begun := time.Now()
			err = p.Shutdown(context.Background())
			took := time.Since(begun)
			var ab *AbandonedError
			if !errors.As(err, &ab) || ab.Calls != 1 {
				t.Fatalf("Shutdown: %v; want an *AbandonedError of 1 call", err)
			}
			// 1.2 s + the 0.4 s grace at most; 1.9 s and more when the
			// budget began after the wait
			if took < 1150*time.Millisecond || took > 1800*time.Millisecond {
				t.Errorf("Shutdown took %v; want about the 1.2 s budget, the 700 ms wait included", took.Round(time.Millisecond))
			}
			if err := <-long; spi.StatusOf(err) != spi.StatusServerError || !strings.Contains(err.Error(), "shutdown timeout passed") {
				t.Errorf("the call in flight: %v; want SERVER_ERROR, its shutdown timeout passed", err)
			}
		})
	}
}

// tester27 finding 4: a liveness-check close is one Warn line, the
// kernel's "channel closed; reconnecting" with the check's reason and the
// calls the close failed; the channel logs no "channel closed" record of
// its own for it (both were at Warn; tester80: it was then at Debug, a
// second record of one event).
func TestHOps2_LivenessCloseIsOneWarnLine(t *testing.T) {
	_, e := provider(t)
	px := testproxy.New(t, e.URL().Address())
	var buf logbuf.Buffer
	c := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	t.Cleanup(func() { _ = c.Close() })
	r := refer(t, c, "airnode://"+px.Addr()+"/demo.Echo?timeout=200ms&methods.Sleep.timeout=20s&retries=0")
	if _, err := r.Invoke(ctxT(t), "Echo", 1); err != nil {
		t.Fatal(err)
	}
	sleeping := make(chan error, 1)
	go func() { _, err := r.Invoke(ctxT(t), "Sleep", 5000); sleeping <- err }() // pending when the check closes
	time.Sleep(100 * time.Millisecond)
	px.Pause(true) // the provider looks hung
	if _, err := r.Invoke(ctxT(t), "Echo", 2); spi.StatusOf(err) != spi.StatusServerTimeout {
		t.Fatalf("call to the paused provider: %v; want SERVER_TIMEOUT", err)
	}
	line := logLine(t, &buf, "level=WARN", `msg="channel closed; reconnecting"`, `reason="liveness check: `, "failed_calls=1")
	if err := <-sleeping; !errors.Is(err, spi.ErrChannelInactive) || !strings.Contains(err.Error(), "liveness check") {
		t.Errorf("the Sleep pending at the close: %v; want CHANNEL_INACTIVE with the check's reason", err)
	}
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.Contains(l, `msg="channel closed"`) && strings.Contains(l, "liveness check") {
			t.Errorf("the channel logged the liveness close too: %s", l)
		}
	}
	warns := 0
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.Contains(l, "level=WARN") && strings.Contains(l, "liveness check") {
			warns++
		}
	}
	if warns != 1 {
		t.Errorf("%d Warn lines about the liveness close, want 1 (%s):\n%s", warns, line, buf.String())
	}
	px.Pause(false)
}
