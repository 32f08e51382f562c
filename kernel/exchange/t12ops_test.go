package exchange

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/logbuf"
)

// levelLogs returns a logger writing text lines, Debug and up, to buf.
func levelLogs(buf *logbuf.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// closedLine returns the provider's "channel closed" line, waiting up to
// 5 s for it.
func closedLine(t *testing.T, buf *logbuf.Buffer) string {
	t.Helper()
	var line string
	waitFor(5*time.Second, func() bool {
		for l := range strings.SplitSeq(buf.String(), "\n") {
			if strings.Contains(l, `msg="channel closed"`) {
				line = l
				return true
			}
		}
		return false
	})
	if line == "" {
		t.Fatalf("no channel closed line:\n%s", buf.String())
	}
	return line
}

// TestT12Ops4_PeerCloseIsDebug (tester12 finding 4): a consumer that
// closes its connection after its call (one per airnode call) is logged
// by the provider at Debug, not Info.
func TestT12Ops4_PeerCloseIsDebug(t *testing.T) {
	var buf logbuf.Buffer
	f := startServer(t, true, func(o *Options) { o.Logger = levelLogs(&buf) })
	ch := f.dial(nil)
	if res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", "x"), 5*time.Second); res.Err != nil {
		t.Fatal(res.Err)
	}
	ch.Close("consumer released the provider")
	line := closedLine(t, &buf)
	for _, want := range []string{"level=DEBUG", `reason="closed by peer"`, "failed_calls=0", "cancelled_requests=0"} {
		if !strings.Contains(line, want) {
			t.Errorf("provider's line %q lacks %q", line, want)
		}
	}
}

// TestT12Ops4_PeerGoneWithRequestsCountsThem: a consumer gone with three
// requests running on the provider (kill -9: airnode stats counts them
// CANCELLED) is logged at Info with cancelled_requests=3, not
// failed_calls=0 alone.
func TestT12Ops4_PeerGoneWithRequestsCountsThem(t *testing.T) {
	var buf logbuf.Buffer
	f := startServer(t, true, func(o *Options) { o.Logger = levelLogs(&buf) })
	ch := f.dial(nil)
	for range 3 {
		go ch.Invoke(context.Background(), mpCodec{}, echoInv("Sleep", 10_000), 20*time.Second)
	}
	if !waitFor(5*time.Second, func() bool { return f.srv.inflight.Load() == 3 }) {
		t.Fatalf("%d requests running on the provider, want 3", f.srv.inflight.Load())
	}
	ch.Close("consumer killed")
	line := closedLine(t, &buf)
	for _, want := range []string{"level=INFO", `reason="closed by peer"`, "cancelled_requests=3"} {
		if !strings.Contains(line, want) {
			t.Errorf("provider's line %q lacks %q", line, want)
		}
	}
}

// TestT12Ops4_HeartbeatCloseIsWarn: a channel its heartbeat strategy
// closes (reason "heartbeat ...": a dead or silent peer) is logged at
// Warn with the reason; a Close for another reason at Debug.
func TestT12Ops4_HeartbeatCloseIsWarn(t *testing.T) {
	for _, tc := range []struct{ reason, level string }{
		{"heartbeat dual: nothing read from 127.0.0.1:1 for 6.017s (heartbeat.timeout 6s), closing", "level=WARN"},
		{"consumer released the provider", "level=DEBUG"},
	} {
		var buf logbuf.Buffer
		f := startServer(t, true, nil)
		ch := f.dial(func(o *Options) { o.Logger = levelLogs(&buf) })
		ch.Close(tc.reason)
		line := closedLine(t, &buf)
		if !strings.Contains(line, tc.level) || !strings.Contains(line, tc.reason) {
			t.Errorf("Close(%q) logged %q, want %s with the reason", tc.reason, line, tc.level)
		}
	}
}
