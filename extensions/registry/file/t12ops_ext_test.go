package file_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/registry/file"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/spi"
)

// lists records every list a subscription is pushed.
type lists struct {
	mu  sync.Mutex
	all [][]spi.URL
}

func (l *lists) notify(u []spi.URL) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, u)
}

func (l *lists) snapshot() [][]spi.URL {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([][]spi.URL(nil), l.all...)
}

func (l *lists) lastLen() int {
	s := l.snapshot()
	if len(s) == 0 {
		return -1
	}
	return len(s[len(s)-1])
}

func waitFor(t *testing.T, what string, bound time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, bound)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestT12Ops5_RemovedDirectoryKeepsTheList (tester12 finding 5): two
// provider processes registered, a consumer subscribed; the registry
// directory is removed (rm -rf) five times and re-created by the
// providers each time: the consumer is never pushed a list without both
// providers, it logs the removal once at Warn and the directory's return,
// and it is still pushed file events afterwards (watched again). When
// the providers then leave for real, the list is empty.
func TestT12Ops5_RemovedDirectoryKeepsTheList(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "reg")
	var log logbuf.Buffer
	c, err := file.Builder{Logger: slog.New(slog.NewTextHandler(&log, nil))}.Build(spi.MustParse("file://" + dir + "?poll=50ms"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	var got lists
	sub, err := c.Subscribe(context.Background(), spi.MustParse("airnode://127.0.0.1/demo.Echo"), got.notify)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sub.Stop)
	a := startChild(t, dir, "airnode://127.0.0.1:20880/demo.Echo?side=provider")
	b := startChild(t, dir, "airnode://127.0.0.1:20881/demo.Echo?side=provider")
	waitFor(t, "both providers listed", 5*time.Second, func() bool { return got.lastLen() == 2 })
	from := len(got.snapshot())

	entries := filepath.Join(dir, "demo.Echo", "providers", "*")
	for i := range 5 {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "entries re-created", 5*time.Second, func() bool {
			m, _ := filepath.Glob(entries)
			return len(m) == 2
		})
		// past the merge grace after the directory's return (1.5 s at poll=50ms)
		time.Sleep(1800 * time.Millisecond)
		if n := got.lastLen(); n != 2 {
			t.Fatalf("removal %d: last list has %d providers, want 2", i+1, n)
		}
	}
	for i, l := range got.snapshot()[from:] {
		if len(l) != 2 {
			t.Fatalf("list %d after the first removal has %d providers, want 2 (never fewer): %v", from+i, len(l), l)
		}
	}
	text := log.String()
	if n := strings.Count(text, "providers directory removed; keeping the last provider list"); n < 1 || n > 5 {
		t.Errorf("%d Warn lines for 5 removals, want 1 to 5 (one per removal seen):\n%s", n, text)
	}
	if !strings.Contains(text, "level=WARN") || !strings.Contains(text, "providers directory back; watching it again") {
		t.Errorf("log lacks the Warn for the removal or the Info for the return:\n%s", text)
	}
	// Each return says how long the directory was gone (f5).
	if back, withFor := strings.Count(text, "providers directory back; watching it again"), regexp.MustCompile(`providers directory back; watching it again" .*gone_for=\d`).FindAllString(text, -1); len(withFor) != back {
		t.Errorf("%d of %d directory-back lines say gone_for:\n%s", len(withFor), back, text)
	}

	// A genuinely empty directory is an empty list; file events still come
	// (not only the poll: this is at most a few polls).
	if err := a.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "one provider after a kill -9", 5*time.Second, func() bool { return got.lastLen() == 1 })
	if err := b.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "an empty list after both left", 5*time.Second, func() bool { return got.lastLen() == 0 })
}

// TestT12Ops5_RemovedRegistryUnregisterIsEmpty: a provider registry in the
// same process re-creates its entry after the directory was removed, and
// its Unregister then empties the consumer's list (after Settle): an
// empty directory is not taken for a removed one.
func TestT12Ops5_RemovedRegistryUnregisterIsEmpty(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "reg")
	c := build(t, "file://"+dir+"?poll=20ms")
	p := build(t, "file://"+dir+"?poll=20ms")
	var got lists
	sub, err := c.Subscribe(context.Background(), spi.MustParse("airnode://127.0.0.1/demo.Echo"), got.notify)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sub.Stop)
	u := spi.MustParse("airnode://127.0.0.1:1/demo.Echo?side=provider")
	if err := p.Register(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "provider listed", 5*time.Second, func() bool { return got.lastLen() == 1 })
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "entry re-created", 5*time.Second, func() bool {
		m, _ := filepath.Glob(filepath.Join(dir, "demo.Echo", "providers", "*"))
		return len(m) == 1
	})
	if err := p.Unregister(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	// within the 1.5 s merge grace the list keeps it; then it is empty
	waitFor(t, "empty list after Unregister", 5*time.Second, func() bool { return got.lastLen() == 0 })
	for i, l := range got.snapshot() {
		if len(l) == 0 && i < len(got.snapshot())-1 && i > 0 {
			t.Errorf("list %d empty before the Unregister", i)
		}
	}
}
