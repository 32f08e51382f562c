package exchange

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
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
	for _, want := range []string{"level=INFO", "cancelled_requests=3"} {
		if !strings.Contains(line, want) {
			t.Errorf("provider's line %q lacks %q", line, want)
		}
	}
	// A close is a FIN, or a reset when something the provider sent was
	// still unread in the consumer's socket (seen under load): either
	// way the peer is gone.
	if !strings.Contains(line, `reason="closed by peer"`) && !strings.Contains(line, "connection reset by peer") {
		t.Errorf("provider's line %q names neither the peer's close nor its reset", line)
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

// t12StopChild names the provider address the child consumer of
// TestT12Ops7_StoppedConsumerSaysSo calls; set only in that child.
const t12StopChild = "AIRNODE_T12OPS_STOP_PROVIDER"

// TestT12Ops7_StoppedConsumerSaysSo (tester12 finding 7): a consumer
// process SIGSTOP'd for 2 s during a call with a 500 ms timeout reports
// the timeout as its own stall ("this process was not running for ~2s"),
// not only as the provider's slowness. The provider here reads and never
// answers, so that the consumer's timer is what ends the call (an
// answering one's response races with the timer at SIGCONT).
func TestT12Ops7_StoppedConsumerSaysSo(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var read atomic.Int64
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Go(func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		b := make([]byte, 4096)
		for {
			n, err := c.Read(b)
			read.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	cmd := exec.Command(os.Args[0], "-test.run=^TestT12Ops7Child$")
	cmd.Env = append(os.Environ(), t12StopChild+"="+l.Addr().String())
	var out logbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if !waitFor(10*time.Second, func() bool { return read.Load() >= protocol.HeaderLen }) { // the request's frame
		t.Fatalf("the child's call never reached the provider; child output:\n%s", out.String())
	}
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if !waitFor(10*time.Second, func() bool { return strings.Contains(out.String(), "RESULT ") }) {
		t.Fatalf("no result from the child:\n%s", out.String())
	}
	text := out.String()
	t.Logf("child: %s", strings.TrimSpace(text))
	for _, want := range []string{"_TIMEOUT: exchange: call demo.Echo.Sleep", "; but its 500ms timer fired", "this process was not running for ~", "(stopped or starved)"} {
		if !strings.Contains(text, want) {
			t.Errorf("child's error lacks %q:\n%s", want, text)
		}
	}
}

// TestT12Ops7Child is the consumer process of
// TestT12Ops7_StoppedConsumerSaysSo: one call of Sleep(10 s) with a
// 500 ms timeout, its error printed as "RESULT err". Outside that test it
// does nothing.
func TestT12Ops7Child(t *testing.T) {
	addr := os.Getenv(t12StopChild)
	if addr == "" {
		t.Skip("the child process of TestT12Ops7_StoppedConsumerSaysSo")
	}
	ch := NewChannel(dialSession(t, addr, false), Options{Side: spi.Consumer, Codec: codecByID, Logger: slog.New(&logSink{})})
	defer func() { ch.Close("done"); ch.Wait() }()
	res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Sleep", 10_000), 500*time.Millisecond)
	fmt.Printf("RESULT %v\n", res.Err)
}

// TestT12Ops7_StalledNote: the note needs the timer to fire at least a
// second and more than the timeout late.
func TestT12Ops7_StalledNote(t *testing.T) {
	for _, tc := range []struct {
		elapsed, timeout time.Duration
		note             bool
	}{
		{1100 * time.Millisecond, time.Second, false},
		{1900 * time.Millisecond, time.Second, false},
		{30 * time.Second, time.Second, true},
		{2 * time.Second, 500 * time.Millisecond, true},
		{9 * time.Second, 5 * time.Second, false},
		{11 * time.Second, 5 * time.Second, true},
	} {
		if got := stalledNote(tc.elapsed, tc.timeout, true) != ""; got != tc.note {
			t.Errorf("stalledNote(%v, %v) != \"\" = %v, want %v", tc.elapsed, tc.timeout, got, tc.note)
		}
	}
}
