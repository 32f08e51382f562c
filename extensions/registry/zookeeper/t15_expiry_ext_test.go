package zookeeper_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/spi"
)

// logLine is one record a registry logged.
type logLine struct {
	at    time.Time
	level slog.Level
	msg   string
	attrs map[string]string
}

// lineLog is a slog.Handler keeping every record.
type lineLog struct {
	mu    sync.Mutex
	lines []logLine
}

func (h *lineLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *lineLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *lineLog) WithGroup(string) slog.Handler            { return h }
func (h *lineLog) Handle(_ context.Context, r slog.Record) error {
	l := logLine{at: r.Time, level: r.Level, msg: r.Message, attrs: map[string]string{}}
	r.Attrs(func(a slog.Attr) bool { l.attrs[a.Key] = a.Value.String(); return true })
	h.mu.Lock()
	h.lines = append(h.lines, l)
	h.mu.Unlock()
	return nil
}

// find returns the lines whose message starts with prefix.
func (h *lineLog) find(prefix string) []logLine {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []logLine
	for _, l := range h.lines {
		if strings.HasPrefix(l.msg, prefix) {
			out = append(out, l)
		}
	}
	return out
}

func (h *lineLog) waitFor(t *testing.T, d time.Duration, prefix string) logLine {
	t.Helper()
	deadline := time.Now().Add(d)
	for len(h.find(prefix)) == 0 {
		if time.Now().After(deadline) {
			h.mu.Lock()
			defer h.mu.Unlock()
			t.Fatalf("no %q line within %v; lines: %+v", prefix, d, h.lines)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return h.find(prefix)[0]
}

const (
	msgEntriesGone = "session expired: provider entries of demo.Echo are not in ZooKeeper until the session is back; consumers that reach ZooKeeper will drop this provider"
	msgEntriesBack = "provider entries of demo.Echo are in ZooKeeper again"
)

// TestT12_8_ProviderSaysItsEntriesExpired (tester12 finding 8): a
// provider cut off ZooKeeper for longer than its session timeout says, at
// Warn, that its provider entries are not in ZooKeeper until the session
// is back and that consumers will drop it (it logged only the consumer's
// "connection lost; keeping last provider lists"), by the time the server
// has deleted them; once a new session has re-created them it says so at
// Info. A registry with no provider entries (a consumer's) says neither.
func TestT12_8_ProviderSaysItsEntriesExpired(t *testing.T) {
	px := testproxy.New(t, server.Addr())
	var plog, clog lineLog
	p, err := zookeeper.Builder{Logger: slog.New(&plog)}.Build(spi.MustParse("zookeeper://" + px.Addr() + "?root=r15&session.timeout=1s"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	if err := p.Register(ctx(t), provider(1, "")); err != nil {
		t.Fatal(err)
	}
	c, err := zookeeper.Builder{Logger: slog.New(&clog)}.Build(spi.MustParse("zookeeper://" + px.Addr() + "?root=r15&session.timeout=1s"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	rec := subscribe(t, c, consumer)
	rec.wait(t, 10*time.Second, 1)
	raw := rawClient(t)
	children := func() int {
		ch, _, err := raw.Children("/r15/demo.Echo/providers")
		if err != nil {
			return -1
		}
		return len(ch)
	}

	unreachable(px)
	lost := plog.waitFor(t, 10*time.Second, "connection lost")
	gone := plog.waitFor(t, 10*time.Second, msgEntriesGone)
	if gone.level != slog.LevelWarn || gone.attrs["services"] != "[demo.Echo]" || gone.at.Before(lost.at) {
		t.Errorf("entries-gone line %v %q %v (lost at %v), want WARN naming demo.Echo after the loss", gone.level, gone.msg, gone.attrs, lost.at)
	}
	deadline := time.Now().Add(10 * time.Second)
	for children() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the server did not delete the expired session's entry within 10 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(plog.find(msgEntriesBack)) != 0 {
		t.Error("entries said back while cut off")
	}

	px.Refuse(false)
	back := plog.waitFor(t, 15*time.Second, msgEntriesBack)
	if back.level != slog.LevelInfo || !strings.Contains(back.msg, "consumers will list this provider again") {
		t.Errorf("back line %v %q, want INFO", back.level, back.msg)
	}
	if n := children(); n != 1 {
		t.Errorf("%d provider entries in ZooKeeper after the Info line, want 1", n)
	}
	if g, b := len(plog.find(msgEntriesGone)), len(plog.find(msgEntriesBack)); g != 1 || b != 1 {
		t.Errorf("%d entries-gone and %d back lines for one outage, want 1 each", g, b)
	}
	if l := clog.find("session expired: provider entries"); len(l) != 0 {
		t.Errorf("a registry without provider entries logged %v", l)
	}
	if l := clog.find("provider entries"); len(l) != 0 {
		t.Errorf("a registry without provider entries logged %v", l)
	}
}
