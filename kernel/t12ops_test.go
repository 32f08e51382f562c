package kernel

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/spi"
)

// TestT12Ops3_ConnectionsCountsAnsweredOnes (tester12 finding 3):
// Reference.Connections, which bench reports, counts as up only the
// connections that answered their first ping: with connections=3 to a
// provider and to a peer that accepts TCP but never answers (what a
// provider out of file descriptors looks like: its kernel queues the
// connection), 3 of 6 are up. The per-provider filter chain (actives)
// is looked through.
func TestT12Ops3_ConnectionsCountsAnsweredOnes(t *testing.T) {
	_, e := provider(t)
	peer := silentPeer(t)
	r := refer(t, consumer(t), "airnode://"+e.URL().Address()+","+peer+
		"/demo.Echo?connections=3&connect.timeout=300ms&actives=100")
	if _, ok := r.dir.All()[0].(*filterInvoker); !ok {
		t.Fatalf("provider invoker %T, want the per-provider filter chain (actives=100)", r.dir.All()[0])
	}
	eventually(t, "3 of 6 connections up", func() bool {
		up, asked := r.Connections()
		return up == 3 && asked == 6
	})
	if _, err := r.Invoke(ctxT(t), "Echo", 1); err != nil {
		t.Fatal(err)
	}
	if up, asked := r.Connections(); up != 3 || asked != 6 {
		t.Fatalf("Connections() = %d up of %d, want 3 of 6", up, asked)
	}
}

// TestT12Ops5_FileRegistryRemovedNoCallFails (tester12 finding 5): two
// providers and a consumer on one file registry; while two callers call,
// the registry directory is removed (rm -rf) three times and the
// providers' registries re-create their entries: no call fails and the
// consumer always lists both providers.
func TestT12Ops5_FileRegistryRemovedNoCallFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "reg")
	reg := spi.MustParse("file://" + dir + "?poll=50ms")
	cat := testCatalogs(t)
	for i := range 2 {
		p := NewNode(cat, WithLogger(quiet), WithRegistry(reg), WithShutdownWait(0))
		t.Cleanup(func() { _ = p.Close() })
		if _, err := p.Export(ctxT(t), demo.New("p"+string(rune('a'+i)), 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo")); err != nil {
			t.Fatal(err)
		}
	}
	c := consumer(t)
	r, err := c.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo"), reg)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "both providers listed", func() bool { return len(r.Providers()) == 2 })

	ctx, cancel := context.WithCancel(context.Background())
	var calls, failed, fewer atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for ctx.Err() == nil {
				if _, err := r.Invoke(context.Background(), "Echo", "x"); err != nil {
					if failed.Add(1) == 1 {
						firstErr.Store(err.Error())
					}
				}
				calls.Add(1)
				if len(r.dir.All()) < 2 {
					fewer.Add(1)
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
	entries := filepath.Join(dir, "demo.Echo", "providers", "*")
	for range 3 {
		time.Sleep(200 * time.Millisecond)
		if err := removeRegistryDir(t, dir); err != nil {
			t.Error(err)
			break
		}
		eventually(t, "entries re-created", func() bool {
			m, _ := filepath.Glob(entries)
			return len(m) == 2
		})
	}
	time.Sleep(1200 * time.Millisecond) // past the consumer's merge grace (1 s)
	cancel()
	wg.Wait()
	t.Logf("%d calls, %d failed, %d saw fewer than 2 providers", calls.Load(), failed.Load(), fewer.Load())
	if failed.Load() > 0 {
		t.Fatalf("%d of %d calls failed while the registry directory was removed; first: %v", failed.Load(), calls.Load(), firstErr.Load())
	}
	if fewer.Load() > 0 {
		t.Fatalf("the consumer listed fewer than 2 providers %d times", fewer.Load())
	}
	if n := len(r.Providers()); n != 2 {
		t.Fatalf("%d providers listed at the end, want 2", n)
	}
}

// removeRegistryDir removes a file registry's directory as an operator's
// rm -rf does, while the registries that registered entries in it (the
// providers', and the consumer's for its consumers entry) re-create
// them, each at its next keep tick (100 ms) after finding its entry
// gone: one that does so between RemoveAll's unlinking of the files and
// of their directory makes that last step fail with ENOTEMPTY (seen at
// load 10-15: "unlinkat .../reg/demo.Echo: directory not empty"). The
// registry is working as it should then; the removal is tried again, so
// that each round ends with the whole directory gone at once, for at
// most 5 s. Any other error is returned.
func removeRegistryDir(t *testing.T, dir string) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := os.RemoveAll(dir)
		if err == nil || !errors.Is(err, syscall.ENOTEMPTY) || time.Now().After(deadline) {
			return err
		}
		t.Logf("removing again: an entry was re-created during the removal (%v)", err)
	}
}

// logLine waits up to 5 s for a line of buf holding every one of parts.
func logLine(t *testing.T, buf *logbuf.Buffer, parts ...string) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		for l := range strings.SplitSeq(buf.String(), "\n") {
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(l, p)
			}
			if ok {
				return l
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log line with %q within 5s:\n%s", parts, buf.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestT12Ops4_ConsumerLogsWhyAndHowLong (tester12 finding 4): the
// consumer's "channel closed; reconnecting" carries the reason, at Warn
// when the provider vanished (connection closed without its go-away), its
// failed redials are logged at Warn on attempts 1, 2, 4... (3 at Debug)
// with the error and how long the provider has been down, and the
// reconnect says how long it was down.
func TestT12Ops4_ConsumerLogsWhyAndHowLong(t *testing.T) {
	_, e := provider(t)
	px := testproxy.New(t, e.URL().Address())
	var buf logbuf.Buffer
	c := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	t.Cleanup(func() { _ = c.Close() })
	r := refer(t, c, "airnode://"+px.Addr()+"/demo.Echo?reconnect.backoff=20ms")
	if _, err := r.Invoke(ctxT(t), "Echo", 1); err != nil {
		t.Fatal(err)
	}
	px.Down() // the provider's host vanished: EOF, then refused dials
	logLine(t, &buf, "level=WARN", `msg="channel closed; reconnecting"`, "provider="+px.Addr(), `reason="closed by peer"`)
	logLine(t, &buf, "level=WARN", `msg="cannot reconnect to provider"`, "attempt=1 ", "connection refused", "down_for=")
	logLine(t, &buf, "level=WARN", `msg="cannot reconnect to provider"`, "attempt=2 ")
	logLine(t, &buf, "level=DEBUG", `msg="cannot reconnect to provider"`, "attempt=3 ")
	logLine(t, &buf, "level=WARN", `msg="cannot reconnect to provider"`, "attempt=4 ")
	px.Up()
	line := logLine(t, &buf, "level=INFO", `msg="reconnected to provider"`, "down_for=")
	if _, err := r.Invoke(ctxT(t), "Echo", 2); err != nil {
		t.Fatalf("call after the reconnect (%s): %v", line, err)
	}
}

// TestT12Ops4_ProviderShutdownIsInfo: a provider that shuts down (its
// read-only event and go-away) closes the consumer's channel cleanly: the
// consumer logs it at Info with the reason, and its failed redials at
// Info too.
func TestT12Ops4_ProviderShutdownIsInfo(t *testing.T) {
	p, e := provider(t)
	var buf logbuf.Buffer
	c := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	t.Cleanup(func() { _ = c.Close() })
	r := refer(t, c, "airnode://"+e.URL().Address()+"/demo.Echo?reconnect.backoff=20ms")
	if _, err := r.Invoke(ctxT(t), "Echo", 1); err != nil {
		t.Fatal(err)
	}
	if err := p.Shutdown(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	logLine(t, &buf, "level=INFO", `msg="channel closed; reconnecting"`, "reason=", "provider_shutting_down=true")
	logLine(t, &buf, "level=INFO", `msg="cannot reconnect to provider"`, "attempt=1 ")
	if strings.Contains(buf.String(), "level=WARN") {
		t.Errorf("a clean provider shutdown logged a Warn:\n%s", buf.String())
	}
}

// TestT12Ops4_ProviderReapsSilentConsumerAtWarn (tester12 finding 4): a
// provider whose heartbeat (dual, 100 ms) closes a consumer that went
// silent logs that close at Warn with the heartbeat's reason, where an
// on-call person sees it at the default level.
func TestT12Ops4_ProviderReapsSilentConsumerAtWarn(t *testing.T) {
	var buf logbuf.Buffer
	p := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&buf, nil))), WithShutdownWait(0))
	t.Cleanup(func() { _ = p.Close() })
	e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?heartbeat=dual&heartbeat.interval=100ms"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", e.URL().Address()) // connects, then says nothing
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	logLine(t, &buf, "level=WARN", `msg="channel closed"`, "side=provider", `reason="heartbeat dual: nothing read from`)
}
