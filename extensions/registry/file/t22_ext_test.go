package file_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/airnode/airnode/extensions/registry/file"
	"github.com/airnode/airnode/spi"
)

// t22ChildEnv, when set to "DIR", makes the test binary the consumer of
// TestT22_3: see runT22Child.
const t22ChildEnv = "AIRNODE_FILE_T22_CHILD"

// syncBuf is a log destination safe for concurrent writes.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func buildLogged(t *testing.T, u string, w io.Writer) *file.Registry {
	t.Helper()
	r, err := file.Builder{Logger: slog.New(slog.NewTextHandler(w, nil))}.Build(spi.MustParse(u))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r.(*file.Registry)
}

// TestT22_2_InotifyUnavailablePolls (tester22 finding 2): with no inotify
// instance left (fs.inotify.max_user_instances reached, the 129th
// consumer process of a Debian user), Subscribe does not fail: one Warn
// names the kernel limit and the subscription polls, seeing a new
// provider within its poll period. The same when a watch cannot be added
// (max_user_watches).
func TestT22_2_InotifyUnavailablePolls(t *testing.T) {
	for _, tc := range []struct {
		name  string
		watch func() (*fsnotify.Watcher, error)
		limit string
	}{
		{"instances", func() (*fsnotify.Watcher, error) {
			return nil, fmt.Errorf("couldn't initialize inotify: %w", syscall.EMFILE)
		}, "fs.inotify.max_user_instances"},
		{"watches", func() (*fsnotify.Watcher, error) {
			w, err := fsnotify.NewWatcher()
			if err == nil {
				_ = w.Close() // every Add fails, as with ENOSPC
			}
			return w, err
		}, "fs.inotify.max_user_watches"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			restore := file.SetNewWatcher(tc.watch)
			defer restore()
			file.ResetInotifyWarn() // once per process (tester23 N3)
			dir := t.TempDir()
			var log syncBuf
			c := buildLogged(t, "file://"+dir+"?poll=50ms", &log)
			p := build(t, "file://"+dir)
			ch := subscribe(t, c, spi.MustParse("airnode://127.0.0.1/demo.Echo"))
			ch2 := subscribe(t, c, spi.MustParse("airnode://127.0.0.1/demo.Other"))
			waitList(t, ch, 0, 5*time.Second, "first list")
			waitList(t, ch2, 0, 5*time.Second, "first list of the second service")
			if err := p.Register(context.Background(), spi.MustParse("airnode://127.0.0.1:1/demo.Echo")); err != nil {
				t.Fatal(err)
			}
			waitList(t, ch, 1, 5*time.Second, "provider seen by polling")
			if !c.Polling() {
				t.Error("Polling() = false")
			}
			out := log.String()
			if n := strings.Count(out, "level=WARN"); n != 1 || !strings.Contains(out, tc.limit) || !strings.Contains(out, "polling") {
				t.Errorf("want one Warn naming %s and polling; log:\n%s", tc.limit, out)
			}
		})
	}
}

// TestT22_3_OutOfDescriptorsKeepsListAndRecovers (tester22 finding 3): a
// consumer process out of file descriptors (RLIMIT_NOFILE lowered in a
// child process, then every descriptor taken) keeps its list, Warns once
// naming EMFILE and ulimit -n (not "providers directory removed"), keeps
// retrying, and sees the providers registered meanwhile once it has
// descriptors again, with an Info line.
func TestT22_3_OutOfDescriptorsKeepsListAndRecovers(t *testing.T) {
	dir := t.TempDir()
	p := build(t, "file://"+dir)
	ctx := context.Background()
	if err := p.Register(ctx, spi.MustParse("airnode://127.0.0.1:1/demo.Echo")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), t22ChildEnv+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 1000)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var all []string
	await := func(prefix string) string {
		t.Helper()
		timer := time.NewTimer(20 * time.Second)
		defer timer.Stop()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("child exited before %q; output:\n%s", prefix, strings.Join(all, "\n"))
				}
				all = append(all, l)
				if strings.HasPrefix(l, prefix) {
					return l
				}
			case <-timer.C:
				t.Fatalf("no %q from the child; output:\n%s", prefix, strings.Join(all, "\n"))
			}
		}
	}
	await("full ")
	for i := 2; i <= 3; i++ {
		if err := p.Register(ctx, spi.MustParse("airnode://127.0.0.1:"+strconv.Itoa(i)+"/demo.Echo")); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Second) // several polls of 50ms, every one failing
	if _, err := io.WriteString(stdin, "release\n"); err != nil {
		t.Fatal(err)
	}
	done := await("done ")
	if done != "done kept=1 after=3" {
		t.Errorf("child: %s (want the list kept at 1 while out of descriptors, then 3)", done)
	}
	out := strings.Join(all, "\n")
	if n := strings.Count(out, "level=WARN"); n != 1 || !strings.Contains(out, "out of file descriptors: see ulimit -n") {
		t.Errorf("want one Warn naming the descriptors; output:\n%s", out)
	}
	if strings.Contains(out, "directory removed") || !strings.Contains(out, "reading the providers directory again") {
		t.Errorf("want no 'directory removed' and an Info when reading again; output:\n%s", out)
	}
}

// runT22Child is TestT22_3's consumer: it subscribes (poll 50ms) with its
// descriptors limited to 64, waits for the first provider, takes every
// descriptor left ("full N"), waits for "release" on stdin while noting
// the longest list seen, frees them and waits for 3 providers
// ("done kept=K after=N").
func runT22Child(dir string) {
	lim := syscall.Rlimit{Cur: 64, Max: 64}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err == nil && old.Max < lim.Max {
		lim = old
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		fmt.Println("setrlimit:", err)
		os.Exit(2)
	}
	r, err := file.Builder{Logger: slog.New(slog.NewTextHandler(os.Stdout, nil))}.Build(spi.MustParse("file://" + dir + "?poll=50ms"))
	if err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	var (
		mu  sync.Mutex
		cur []spi.URL
	)
	changed := make(chan struct{}, 1)
	_, err = r.Subscribe(context.Background(), spi.MustParse("airnode://127.0.0.1/demo.Echo"), func(l []spi.URL) {
		mu.Lock()
		cur = l
		mu.Unlock()
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	if err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	size := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(cur)
	}
	waitSize := func(n int) bool {
		deadline := time.Now().Add(15 * time.Second)
		for size() != n {
			if time.Now().After(deadline) {
				return false
			}
			select {
			case <-changed:
			case <-time.After(50 * time.Millisecond):
			}
		}
		return true
	}
	if !waitSize(1) {
		fmt.Println("first list: no provider")
		os.Exit(2)
	}
	var fill []int
	for {
		fd, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			if !errors.Is(err, syscall.EMFILE) {
				fmt.Println("fill:", err)
				os.Exit(2)
			}
			break
		}
		fill = append(fill, fd)
	}
	fmt.Println("full", len(fill))
	release := make(chan struct{})
	go func() {
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		close(release)
	}()
	kept := 0
	for wait := true; wait; {
		select {
		case <-release:
			wait = false
		case <-time.After(20 * time.Millisecond):
		}
		kept = max(kept, size())
	}
	for _, fd := range fill {
		syscall.Close(fd)
	}
	waitSize(3)
	fmt.Printf("done kept=%d after=%d\n", kept, size())
	os.Exit(0)
}

// fdCount is the number of descriptors this process has open.
func fdCount(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	return len(ents)
}

// TestT22_4_OneDescriptorPerRegistry (tester22 finding 4): a registry
// holds one descriptor (its owner lock file) whatever the number of its
// entries, providers and consumers (it held one per entry: 150 services
// under ulimit -n 256 left a provider 96 connections, not the 192 of
// accepts); a second live registration of a provider URL still fails,
// and Close leaves no entry and no owner file.
func TestT22_4_OneDescriptorPerRegistry(t *testing.T) {
	dir := t.TempDir()
	before := fdCount(t)
	r := build(t, "file://"+dir)
	ctx := context.Background()
	for i := range 200 {
		svc := "demo.S" + strconv.Itoa(i)
		if err := r.Register(ctx, spi.MustParse("airnode://127.0.0.1:1/"+svc+"?side=provider")); err != nil {
			t.Fatal(err)
		}
		if err := r.Register(ctx, spi.MustParse("consumer://127.0.0.1/"+svc+"?side=consumer&pid=1&timestamp=1")); err != nil {
			t.Fatal(err)
		}
	}
	if got := fdCount(t) - before; got > 2 {
		t.Errorf("400 entries hold %d more descriptors, want 1 (the owner lock)", got)
	}
	r2 := build(t, "file://"+dir)
	if err := r2.Register(ctx, spi.MustParse("airnode://127.0.0.1:1/demo.S7?side=provider")); err == nil ||
		!strings.Contains(err.Error(), "already registered by another live registry") {
		t.Errorf("a second live registration: %v", err)
	}
	for _, x := range []spi.Registry{r, r2} {
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*", "*", "*"))
	owners, _ := filepath.Glob(filepath.Join(dir, file.OwnersDir, "*"))
	if len(left) != 0 || len(owners) != 0 {
		t.Errorf("after Close: entries %v, owner files %v", left, owners)
	}
}

// TestT22_4_Kill9ManyEntries: a kill -9'd process's entries, all named
// after its one owner lock, are dropped within a few polls and removed.
func TestT22_4_Kill9ManyEntries(t *testing.T) {
	dir := t.TempDir()
	c := build(t, "file://"+dir+"?poll=50ms")
	ch := subscribe(t, c, spi.MustParse("airnode://127.0.0.1/demo.Echo"))
	waitList(t, ch, 0, 5*time.Second, "first list")
	child := startChild(t, dir, "airnode://127.0.0.1:20880/demo.Echo?side=provider")
	waitList(t, ch, 1, 5*time.Second, "child registered")
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	waitList(t, ch, 0, 5*time.Second, "after kill -9")
	deadline := time.Now().Add(5 * time.Second)
	for {
		ents, _ := filepath.Glob(filepath.Join(dir, "demo.Echo", "providers", "*"))
		owners, _ := filepath.Glob(filepath.Join(dir, file.OwnersDir, "*"))
		if len(ents) == 0 && len(owners) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("dead entries %v or owner files %v left", ents, owners)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestT22_4_OlderEntryFormat: an entry of the older format (no owner in
// its name, flocked itself by its live process) is listed while its lock
// is held, blocks a registration of the same provider URL, and is removed
// once its lock is free: the rolling-upgrade rule in the package doc.
func TestT22_4_OlderEntryFormat(t *testing.T) {
	dir := t.TempDir()
	u := spi.MustParse("airnode://127.0.0.1:9/demo.Echo?side=provider")
	pd := filepath.Join(dir, "demo.Echo", "providers")
	if err := os.MkdirAll(pd, 0o777); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(pd, strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(u.String(), "%", "%25"), ":", "%3A"), "/", "%2F"), "?", "%3F"), "=", "%3D"))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(u.String() + "\n"); err != nil {
		t.Fatal(err)
	}
	c := build(t, "file://"+dir+"?poll=50ms")
	ch := subscribe(t, c, spi.MustParse("airnode://127.0.0.1/demo.Echo"))
	l := waitList(t, ch, 1, 5*time.Second, "older entry listed")
	if !l[0].Equal(u) {
		t.Errorf("listed %v, want %v", l[0], u)
	}
	if err := build(t, "file://"+dir).Register(context.Background(), u); err == nil {
		t.Error("registering the URL of a live older-format entry succeeded")
	}
	f.Close() // its process died
	waitList(t, ch, 0, 5*time.Second, "older entry dead")
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("dead older entry not removed: %v", err)
	}
}

// TestT22_10_ConsumerEntryPerRegistry (tester22 finding 10): two nodes of
// one process (two registries) referring to one service in the same
// millisecond register the same consumer URL: each gets its own entry.
func TestT22_10_ConsumerEntryPerRegistry(t *testing.T) {
	dir := t.TempDir()
	u := spi.MustParse("consumer://127.0.0.1/demo.Echo?side=consumer&pid=1&timestamp=1796050272000")
	a, b := build(t, "file://"+dir), build(t, "file://"+dir)
	for _, r := range []spi.Registry{a, b} {
		if err := r.Register(context.Background(), u); err != nil {
			t.Fatal(err)
		}
	}
	ents, _ := filepath.Glob(filepath.Join(dir, "demo.Echo", "consumers", "*"))
	if len(ents) != 2 {
		t.Errorf("consumer entries %v, want one per registry", ents)
	}
	if err := a.Unregister(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	if ents, _ := filepath.Glob(filepath.Join(dir, "demo.Echo", "consumers", "*")); len(ents) != 1 {
		t.Errorf("after one Unregister: %v", ents)
	}
}

// idleDir registers n providers of demo.Echo, each by its own registry
// (owner), as n provider processes would, and waits past the directory's
// quiet time. Their poll is a minute, so that no keeper goroutine runs
// (allocates) while an idle poll is measured.
func idleDir(tb testing.TB, n int) string {
	tb.Helper()
	dir := tb.TempDir()
	for i := range n {
		r, err := file.Builder{}.Build(spi.MustParse("file://" + dir + "?poll=1m"))
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = r.Close() })
		if err := r.Register(context.Background(), spi.MustParse("airnode://127.0.0.1:"+strconv.Itoa(1000+i)+"/demo.Echo")); err != nil {
			tb.Fatal(err)
		}
	}
	time.Sleep(200 * time.Millisecond)
	return dir
}

// TestT22_7_IdlePollReadsNothing (tester22 finding 7): a poll of an
// unchanged directory of 300 providers reads no entry and allocates
// (almost) nothing; a new entry is still seen at the next poll, and a
// removed one.
func TestT22_7_IdlePollReadsNothing(t *testing.T) {
	dir := idleDir(t, 300)
	poll := file.IdleScanner(filepath.Join(dir, "demo.Echo", "providers"), dir)
	if changed, n, err := poll(true); err != nil || !changed || n != 300 {
		t.Fatalf("first poll: changed=%v n=%d err=%v", changed, n, err)
	}
	if allocs := testing.AllocsPerRun(20, func() {
		if changed, n, err := poll(false); err != nil || changed || n != 300 {
			t.Fatalf("idle poll: changed=%v n=%d err=%v", changed, n, err)
		}
	}); allocs > 2 {
		t.Errorf("an idle poll allocates %v times, want at most 2 (the directory's stat)", allocs)
	}
	r := build(t, "file://"+dir+"?poll=1m")
	u := spi.MustParse("airnode://127.0.0.1:1/demo.Echo")
	if err := r.Register(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	if changed, n, err := poll(false); err != nil || !changed || n != 301 {
		t.Errorf("poll after a Register: changed=%v n=%d err=%v", changed, n, err)
	}
	if err := r.Close(); err != nil { // unregisters
		t.Fatal(err)
	}
	if changed, n, err := poll(false); err != nil || !changed || n != 300 {
		t.Errorf("poll after a Close: changed=%v n=%d err=%v", changed, n, err)
	}
}

// BenchmarkIdlePoll is one poll of an unchanged providers directory of
// 300 providers (300 owners), as every subscription runs every poll
// period (500ms by default). Measured on 2 shared cores (ext4): 1.5-1.8
// ms, 64 B, 1 alloc per poll; the version before tester22, which re-read
// every entry, 6.1-13.3 ms, 463 KB, 7972 allocs.
//
//	go test -run '^$' -bench IdlePoll -benchtime 1000x ./extensions/registry/file/
func BenchmarkIdlePoll(b *testing.B) {
	dir := idleDir(b, 300)
	poll := file.IdleScanner(filepath.Join(dir, "demo.Echo", "providers"), dir)
	if _, n, err := poll(true); err != nil || n != 300 {
		b.Fatalf("first poll: n=%d err=%v", n, err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, n, err := poll(false); err != nil || n != 300 {
			b.Fatalf("n=%d err=%v", n, err)
		}
	}
}
