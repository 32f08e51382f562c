package file_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/airnode/airnode/extensions/registry/file"
	"github.com/airnode/airnode/spi"
)

// inotifyFDs counts this process's inotify instances: the links of
// /proc/self/fd to anon_inode:inotify.
func inotifyFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && l == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// TestT23_N3_OneInotifyInstancePerProcess (tester23 N3): 200 registries
// of one process, on two registry directories, hold one inotify instance
// between them (they held one each: 128 registries took every instance
// of a Debian user), and every one of them sees a new provider by its
// file event (poll is a minute). The instance is closed with the last
// registry.
func TestT23_N3_OneInotifyInstancePerProcess(t *testing.T) {
	before := inotifyFDs(t)
	dirs := []string{t.TempDir(), t.TempDir()}
	const n = 200
	regs := make([]spi.Registry, 0, n)
	chans := make([]<-chan []spi.URL, 0, n)
	consumer := spi.MustParse("airnode://127.0.0.1/demo.Echo")
	for i := range n {
		r, err := file.Builder{}.Build(spi.MustParse("file://" + dirs[i%2] + "?poll=1m"))
		if err != nil {
			t.Fatal(err)
		}
		regs = append(regs, r)
		chans = append(chans, subscribe(t, r, consumer))
	}
	t.Cleanup(func() {
		for _, r := range regs {
			_ = r.Close()
		}
	})
	for i, ch := range chans {
		waitList(t, ch, 0, 10*time.Second, fmt.Sprintf("first list of registry %d", i))
	}
	if got := inotifyFDs(t) - before; got != 1 {
		t.Errorf("%d registries hold %d more inotify instances, want 1", n, got)
	}
	for i, d := range dirs {
		p := build(t, "file://"+d)
		if err := p.Register(context.Background(), spi.MustParse(fmt.Sprintf("airnode://127.0.0.1:%d/demo.Echo", i+1))); err != nil {
			t.Fatal(err)
		}
	}
	for i, ch := range chans {
		waitList(t, ch, 1, 20*time.Second, fmt.Sprintf("new provider seen by registry %d (file event: poll is 1m)", i))
	}
	for _, r := range regs[:n-1] {
		_ = r.Close()
	}
	if got := inotifyFDs(t) - before; got != 1 {
		t.Errorf("with one registry left: %d more inotify instances, want 1", got)
	}
	_ = regs[n-1].Close()
	if got := inotifyFDs(t) - before; got != 0 {
		t.Errorf("with every registry closed: %d more inotify instances, want 0", got)
	}
}

// TestT23_N3_InotifyWarnOncePerProcess (tester23 N3): with inotify
// unavailable, 20 registries of one process poll and log one Warn between
// them (372 lines from one process of 500 nodes before).
func TestT23_N3_InotifyWarnOncePerProcess(t *testing.T) {
	restore := file.SetNewWatcher(func() (*fsnotify.Watcher, error) {
		return nil, fmt.Errorf("couldn't initialize inotify: %w", syscall.EMFILE)
	})
	defer restore()
	file.ResetInotifyWarn()
	dir := t.TempDir()
	var log syncBuf
	consumer := spi.MustParse("airnode://127.0.0.1/demo.Echo")
	chans := []<-chan []spi.URL{}
	for range 20 {
		r := buildLogged(t, "file://"+dir+"?poll=50ms", &log)
		chans = append(chans, subscribe(t, r, consumer))
		if !r.Polling() {
			t.Error("Polling() = false")
		}
	}
	p := build(t, "file://"+dir)
	if err := p.Register(context.Background(), spi.MustParse("airnode://127.0.0.1:1/demo.Echo")); err != nil {
		t.Fatal(err)
	}
	for i, ch := range chans {
		waitList(t, ch, 1, 10*time.Second, fmt.Sprintf("provider seen by polling, registry %d", i))
	}
	if n := strings.Count(log.String(), "level=WARN"); n != 1 {
		t.Errorf("%d Warn lines from 20 registries, want 1; log:\n%s", n, log.String())
	}
}

// TestT23_3_StaleListWarnRepeats (tester23 "3. PARTLY"): a consumer that
// cannot read its providers directory (here it is replaced by a file:
// ENOTDIR, as EMFILE at the descriptor limit) repeats its Warn while it
// cannot, rate-bounded (30 s; 200 ms here), saying how long its list has
// been stale; it keeps its list, and reads again once it can.
func TestT23_3_StaleListWarnRepeats(t *testing.T) {
	defer file.SetStaleWarnEvery(200 * time.Millisecond)()
	dir := t.TempDir()
	p := build(t, "file://"+dir)
	if err := p.Register(context.Background(), spi.MustParse("airnode://127.0.0.1:1/demo.Echo")); err != nil {
		t.Fatal(err)
	}
	var log syncBuf
	c := buildLogged(t, "file://"+dir+"?poll=50ms", &log)
	ch := subscribe(t, c, spi.MustParse("airnode://127.0.0.1/demo.Echo"))
	waitList(t, ch, 1, 10*time.Second, "first list")
	if err := p.Close(); err != nil { // so that nothing re-creates the directory
		t.Fatal(err)
	}
	pdir := filepath.Join(dir, "demo.Echo", file.Providers)
	if err := os.RemoveAll(pdir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pdir, []byte("not a directory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for strings.Count(log.String(), "still cannot read the providers directory") < 3 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	out := log.String()
	if n := strings.Count(out, "still cannot read the providers directory"); n < 3 || !strings.Contains(out, "stale_for=") {
		t.Fatalf("want the Warn repeated with stale_for while the directory cannot be read; log:\n%s", out)
	}
	if n := strings.Count(out, "level=WARN"); n > 40 {
		t.Errorf("%d Warn lines: not rate-bounded; log:\n%s", n, out)
	}
	select {
	case l := <-ch:
		t.Errorf("list pushed while the directory cannot be read: %v", l)
	default:
	}
	if err := os.Remove(pdir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(pdir, file.DirMode); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(20 * time.Second)
	for !strings.Contains(log.String(), "reading the providers directory again") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(log.String(), "reading the providers directory again") {
		t.Errorf("no Info line when the directory can be read again; log:\n%s", log.String())
	}
}
