package kernel

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/spi"
)

// TestFixP_OneShotLogsCloseAtDebug (fix-p): a one-shot consumer
// (WithOneShot, airnode call) whose provider vanishes logs the dead channel
// at Debug as "kernel: channel closed", never the Warn "kernel: channel
// closed; reconnecting" a long-lived consumer logs for the same close
// (TestT12Ops4_ConsumerLogsWhyAndHowLong), nor its failed redials at Warn;
// a call the close fails still fails CHANNEL_INACTIVE.
func TestFixP_OneShotLogsCloseAtDebug(t *testing.T) {
	_, e := provider(t)
	px := testproxy.New(t, e.URL().Address())
	var buf logbuf.Buffer
	c := NewNode(testCatalogs(t), WithOneShot(), WithLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	t.Cleanup(func() { _ = c.Close() })
	r := refer(t, c, "airnode://"+px.Addr()+"/demo.Echo?reconnect.backoff=20ms&retries=0")
	if _, err := r.Invoke(ctxT(t), "Echo", 1); err != nil {
		t.Fatal(err)
	}
	failed := make(chan error, 1)
	go func() {
		_, err := r.Invoke(ctxT(t), "Sleep", 2000)
		failed <- err
	}()
	time.Sleep(300 * time.Millisecond) // the Sleep call is in flight
	px.Down()                          // the provider's host vanished: EOF, then refused dials
	select {
	case err := <-failed:
		var se *spi.Error
		if !errors.As(err, &se) || se.Status != spi.StatusChannelInactive {
			t.Fatalf("call in flight when the channel closed: %v; want CHANNEL_INACTIVE", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("call in flight when the channel closed did not fail within 10s")
	}
	logLine(t, &buf, "level=DEBUG", `msg="channel closed"`, "provider="+px.Addr(), `reason="closed by peer"`, "one_shot=true")
	logLine(t, &buf, "level=DEBUG", `msg="cannot reconnect to provider"`, "attempt=2 ")
	for l := range strings.SplitSeq(buf.String(), "\n") {
		if strings.Contains(l, "reconnecting") || (strings.Contains(l, "level=WARN") && strings.Contains(l, `msg="kernel:`)) {
			t.Errorf("one-shot consumer logged %s\nlog:\n%s", l, buf.String())
		}
	}
}
