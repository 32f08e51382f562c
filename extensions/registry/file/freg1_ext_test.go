package file_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/extensions/registry/file"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// freg1Echo is the service the provider nodes export.
type freg1Echo struct{}

func (freg1Echo) Echo(_ context.Context, s string) (string, error) { return s, nil }

// freg1Provider starts a kernel.Node exporting demo.Echo on a free loopback
// port through the file registry at dir (poll 200ms), logging into log.
func freg1Provider(t *testing.T, dir string, log *logbuf.Buffer) *kernel.Exporter {
	t.Helper()
	n := kernel.NewNode(bundle.Catalogs(), kernel.WithRegistry(spi.MustParse("file://"+dir+"?poll=200ms")),
		kernel.WithShutdownWait(0), kernel.WithLogger(slog.New(slog.NewTextHandler(log, nil))))
	t.Cleanup(func() { _ = n.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	e, err := n.Export(ctx, freg1Echo{}, spi.MustParse("airnode://127.0.0.1:0/demo.Echo?warmup=0"))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// freg1Call starts a new consumer node on the file registry at dir, as a
// new process would, and calls demo.Echo once through it.
func freg1Call(dir string) error {
	var log logbuf.Buffer
	n := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	defer n.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ref, err := n.Refer(ctx, spi.MustParse("airnode:///demo.Echo?timeout=3s"), spi.MustParse("file://"+dir))
	if err != nil {
		return err
	}
	var got string
	if err := ref.Call(ctx, "Echo", []any{"x"}, &got); err != nil {
		return err
	}
	if got != "x" {
		return errors.New("Echo answered " + got)
	}
	return nil
}

// freg1Live returns the providers entries of demo.Echo in dir whose owner
// lock file is in dir/.owners and locked (a live owner, as every reader
// checks), and how many entries there are in all.
func freg1Live(t *testing.T, dir string) (live, all int) {
	t.Helper()
	ents, _ := os.ReadDir(filepath.Join(dir, "demo.Echo", file.Providers))
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, ".") {
			continue
		}
		all++
		i := strings.LastIndex(n, file.Separator)
		if i < 0 {
			continue
		}
		f, err := os.Open(filepath.Join(dir, file.OwnersDir, n[i+1:]))
		if err != nil {
			continue
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); errors.Is(err, syscall.EWOULDBLOCK) {
			live++
		}
		f.Close()
	}
	return live, all
}

// freg1Back waits until both providers' entries are in dir with their
// owner lock files held, stay so for 5 polls of the providers (readers
// poll meanwhile and would remove a dead owner's), and a new consumer
// calls demo.Echo through the registry.
func freg1Back(t *testing.T, dir string, reader spi.Registry, what string) time.Duration {
	t.Helper()
	start := time.Now()
	waitFor(t, what+": both entries back with their owner lock files", 10*time.Second, func() bool {
		live, _ := freg1Live(t, dir)
		return live == 2
	})
	back := time.Since(start)
	for range 10 {
		time.Sleep(100 * time.Millisecond)
		// a reader listing the directory removes dead owners' entries
		if l, err := reader.Lookup(context.Background(), spi.MustParse("airnode://127.0.0.1/demo.Echo")); err != nil || len(l) != 2 {
			t.Fatalf("%s: a reader lists %d providers (%v), want 2", what, len(l), err)
		}
		if live, all := freg1Live(t, dir); live != 2 || all != 2 {
			t.Fatalf("%s: %d entries, %d of them with a live owner, want 2 and 2", what, all, live)
		}
	}
	if err := freg1Call(dir); err != nil {
		t.Fatalf("%s: a new consumer's call: %v", what, err)
	}
	return back
}

// TestFreg1_MovedRegistryDirectory (tester46 finding 1): the registry
// directory of two provider nodes is moved away (mv reg reg.x). Each
// provider's owner lock file stayed in the moved copy: the providers
// re-created their entries without it, readers removed them as a dead
// process's, twice a second, until the copy was deleted, and new
// consumers found no provider. Now each provider re-creates its owner
// lock file, then its entries, within a few polls, and they stay; also
// when a regular file stands where the directory was for 2 s (one Warn
// per provider, not one per poll, and an Info when it works again).
func TestFreg1_MovedRegistryDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "reg")
	var logs [2]logbuf.Buffer
	for i := range logs {
		freg1Provider(t, dir, &logs[i])
	}
	reader := build(t, "file://"+dir)
	freg1Back(t, dir, reader, "at start")

	if err := os.Rename(dir, dir+".x"); err != nil {
		t.Fatal(err)
	}
	took := freg1Back(t, dir, reader, "after mv reg reg.x")
	t.Logf("after mv: entries and owner lock files back in %v", took.Round(time.Millisecond))
	for i := range logs {
		if s := logs[i].String(); !strings.Contains(s, "owner lock file re-created") {
			t.Errorf("provider %d logged no owner lock file re-creation:\n%s", i, s)
		}
	}

	// mv away and a regular file in its place for 2 s
	if err := os.RemoveAll(dir + ".x"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir, dir+".x"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, []byte("not a directory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // 10 polls of the providers
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	took = freg1Back(t, dir, reader, "after mv and 2 s of a file in its place")
	t.Logf("after the file was removed: entries and owner lock files back in %v", took.Round(time.Millisecond))
	for i := range logs {
		s := logs[i].String()
		if n := strings.Count(s, "cannot re-create the owner lock file"); n != 1 {
			t.Errorf("provider %d: %d Warn lines for 10 failed polls, want 1:\n%s", i, n, s)
		}
		if strings.Contains(s, "cannot re-create entry") {
			t.Errorf("provider %d tried its entries without an owner lock file:\n%s", i, s)
		}
		if !strings.Contains(s, "level=INFO msg=\"the owner lock file could be re-created again\"") ||
			!strings.Contains(s, "after_failed_polls=") {
			t.Errorf("provider %d: no Info line when it worked again:\n%s", i, s)
		}
	}
}

// freg1Entry returns the path of the one providers entry of demo.Echo in
// dir, its content and inode.
func freg1Entry(t *testing.T, dir string) (path, content string, ino uint64) {
	t.Helper()
	ents, err := filepath.Glob(filepath.Join(dir, "demo.Echo", file.Providers, "*"))
	if err != nil || len(ents) != 1 {
		t.Fatalf("providers entries: %v, %v; want one", ents, err)
	}
	b, err := os.ReadFile(ents[0])
	if err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(ents[0], &st); err != nil {
		t.Fatal(err)
	}
	return ents[0], string(b), st.Ino
}

// writeInPlace writes content into path's inode (O_TRUNC, as a shell's >
// does), checking the inode stayed.
func writeInPlace(t *testing.T, path, content string) {
	t.Helper()
	var before, after syscall.Stat_t
	_ = syscall.Stat(path, &before)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Stat(path, &after); err != nil || after.Ino != before.Ino {
		t.Fatalf("the write replaced the file (inode %d, then %d: %v)", before.Ino, after.Ino, err)
	}
}

// TestFreg1_EntryEditedInPlaceIsPutBack (tester46 finding 2): a
// provider's entry written in place (echo ... > entry: same inode) with
// another weight, or truncated (: > entry), stayed so: a hand edit became
// a live override, or the provider vanished for every consumer, with
// nothing logged. Now the provider puts it back within a few polls and
// says so at Warn, naming what the file held; a touch that leaves the
// content is not an edit. A directory made where the entry belongs gets
// one Warn naming the path, and the entry is back (with an Info) once
// the directory is removed.
func TestFreg1_EntryEditedInPlaceIsPutBack(t *testing.T) {
	dir := t.TempDir()
	var log logbuf.Buffer
	freg1Provider(t, dir, &log)
	path, want, ino := freg1Entry(t, dir)
	reader := build(t, "file://"+dir)
	consumer := spi.MustParse("airnode://127.0.0.1/demo.Echo")

	// touch: same content, new mtime; left as it is
	now := time.Now().Add(time.Second)
	if err := os.Chtimes(path, now, now); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // 5 polls
	if p, c, i := freg1Entry(t, dir); p != path || c != want || i != ino {
		t.Fatalf("after a touch: entry %s (inode %d) %q, want it left as it was", p, i, c)
	}

	for _, edit := range []struct{ name, content, was string }{
		{"weight 300", strings.Replace(want, "demo.Echo?", "demo.Echo?weight=300&", 1), "weight=300"},
		{"truncated", "", "was=(empty)"},
		{"junk", "hand edit\n", `was="hand edit"`},
	} {
		mark := len(log.String())
		logged := func() string { return log.String()[mark:] }
		writeInPlace(t, path, edit.content)
		start := time.Now()
		waitFor(t, edit.name+": entry put back", 5*time.Second, func() bool {
			b, err := os.ReadFile(path)
			return err == nil && string(b) == want
		})
		t.Logf("%s: put back in %v", edit.name, time.Since(start).Round(time.Millisecond))
		waitFor(t, edit.name+": Warn line", 5*time.Second, func() bool {
			return strings.Contains(logged(), "entry edited in place; put back")
		})
		if s := logged(); !strings.Contains(s, "level=WARN") || !strings.Contains(s, edit.was) || !strings.Contains(s, path) {
			t.Errorf("%s: the Warn does not name the file and what it held (%s):\n%s", edit.name, edit.was, s)
		}
		if l, err := reader.Lookup(context.Background(), consumer); err != nil || len(l) != 1 || l[0].String()+"\n" != want {
			t.Fatalf("%s: a reader lists %v (%v), want the registered URL", edit.name, l, err)
		}
		if err := freg1Call(dir); err != nil {
			t.Fatalf("%s: a new consumer's call: %v", edit.name, err)
		}
		time.Sleep(600 * time.Millisecond) // 3 polls: put back once
		if n := strings.Count(logged(), "entry edited in place"); n != 1 {
			t.Errorf("%s: %d Warn lines, want 1:\n%s", edit.name, n, logged())
		}
	}

	// a directory where the entry belongs
	mark := len(log.String())
	logged := func() string { return log.String()[mark:] }
	waitFor(t, "rm entry; mkdir entry", 5*time.Second, func() bool {
		_ = os.Remove(path)
		return os.Mkdir(path, 0o755) == nil // the provider may re-create it in between
	})
	time.Sleep(2 * time.Second) // 10 polls
	s := logged()
	if n := strings.Count(s, "cannot re-create entry"); n != 1 {
		t.Errorf("a directory in place for 10 polls: %d Warn lines, want 1:\n%s", n, s)
	}
	if !strings.Contains(s, "path="+path) || !strings.Contains(s, "rmdir") {
		t.Errorf("the Warn does not name the path and what to do:\n%s", s)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "entry back after rmdir", 5*time.Second, func() bool {
		b, err := os.ReadFile(path)
		return err == nil && string(b) == want
	})
	waitFor(t, "Info line after rmdir", 5*time.Second, func() bool {
		return strings.Contains(logged(), "level=INFO msg=\"entry re-created\"") &&
			strings.Contains(logged(), "after_failed_polls=")
	})
	if err := freg1Call(dir); err != nil {
		t.Fatalf("after rmdir: a new consumer's call: %v", err)
	}
}
