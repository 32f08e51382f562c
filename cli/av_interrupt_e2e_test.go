package cli

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/spi"
)

// avSleeper's Sleep records why its context ended.
type avSleeper struct {
	started chan struct{}
	mu      sync.Mutex
	cause   error
	ended   chan struct{}
}

// Sleep waits ms milliseconds or until ctx ends, recording its cause.
func (s *avSleeper) Sleep(ctx context.Context, ms int) (int, error) {
	close(s.started)
	defer close(s.ended)
	select {
	case <-time.After(time.Duration(ms) * time.Millisecond):
		return ms, nil
	case <-ctx.Done():
		s.mu.Lock()
		s.cause = context.Cause(ctx)
		s.mu.Unlock()
		return 0, ctx.Err()
	}
}

// interruptCall runs `airnode call --timeout 10s url Sleep 3000`, sends it
// SIGINT once ready says so and returns its exit code and stderr.
func interruptCall(t *testing.T, url string, ready func()) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "call", "--timeout", "10s", url, "Sleep", "3000")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("call after SIGINT: %v, want an exit status; stderr %q", err, errb.String())
	}
	return ee.ExitCode(), errb.String()
}

// tester81 #10: Ctrl-C on `airnode call` cancels the call first, so that
// the exchange's cancel event reaches the provider (its handler's cause is
// the consumer's cancel, not the connection's close), then exits 130
// saying the request had been sent and may have run.
func TestAV_InterruptedCallSendsTheCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet), kernel.WithShutdownWait(0))
	t.Cleanup(func() { _ = n.Close() })
	s := &avSleeper{started: make(chan struct{}), ended: make(chan struct{})}
	e, err := n.Export(ctx, s, spi.MustParse("airnode://127.0.0.1:0/av.Sleeper"))
	if err != nil {
		t.Fatal(err)
	}
	addr := e.URL().Address()
	code, stderr := interruptCall(t, "airnode://"+addr+"/av.Sleeper", func() {
		select {
		case <-s.started:
		case <-time.After(20 * time.Second):
			t.Fatal("Sleep never started on the provider")
		}
	})
	if code != 130 || !strings.Contains(stderr, "interrupted by SIGINT; the request had been sent to "+addr+" and may have run") {
		t.Errorf("exit %d, stderr %q; want 130 and that the request had been sent to %s", code, stderr, addr)
	}
	select {
	case <-s.ended:
	case <-time.After(10 * time.Second):
		t.Fatal("Sleep's context never ended")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !errors.Is(s.cause, exchange.ErrConsumerCanceled) {
		t.Errorf("the handler's cause is %v, want the consumer's cancel event", s.cause)
	}
}

// Interrupted before the request was sent (the only provider listed never
// answers the handshake), it says so.
func TestAV_InterruptedBeforeSendingSaysSo(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c // held open, never answered
		}
	}()
	defer func() {
		for {
			select {
			case c := <-accepted:
				c.Close()
			default:
				return
			}
		}
	}()
	code, stderr := interruptCall(t, "airnode://"+ln.Addr().String()+"/av.Sleeper", func() {
		select {
		case c := <-accepted:
			accepted <- c
		case <-time.After(20 * time.Second):
			t.Fatal("the call never dialled")
		}
		time.Sleep(200 * time.Millisecond)
	})
	if code != 130 || !strings.Contains(stderr, "interrupted by SIGINT before the request was sent") {
		t.Errorf("exit %d, stderr %q; want 130 and that the request was not sent", code, stderr)
	}
}
