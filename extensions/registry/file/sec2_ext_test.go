package file_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
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

// sec2TmpDefault makes $TMPDIR a new directory and unsets what the two
// other defaults need (XDG_RUNTIME_DIR, HOME, XDG_CACHE_HOME), as under
// cron or a bare systemd unit, so that file:// is
// $TMPDIR/airnode-<uid>/registry; it returns that directory.
func sec2TmpDefault(t *testing.T) string {
	t.Helper()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	dir := filepath.Join(tmp, "airnode-"+strconv.Itoa(os.Getuid()), "registry")
	if got := file.DefaultDir(); got != dir {
		t.Fatalf("DefaultDir() = %q, want %q", got, dir)
	}
	return dir
}

// sec2Export starts a provider node of demo.Echo on a free loopback port
// with registry reg, logging into log, and returns Export's error.
func sec2Export(t *testing.T, reg string, log *logbuf.Buffer) error {
	t.Helper()
	n := kernel.NewNode(bundle.Catalogs(), kernel.WithRegistry(spi.MustParse(reg)),
		kernel.WithShutdownWait(0), kernel.WithLogger(slog.New(slog.NewTextHandler(log, nil))))
	t.Cleanup(func() { _ = n.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := n.Export(ctx, freg1Echo{}, spi.MustParse("airnode://127.0.0.1:0/demo.Echo?warmup=0&token=S3cr3tTok3n"))
	return err
}

// sec2Mode returns the permission bits and owner of path (not followed).
func sec2Mode(t *testing.T, path string) (os.FileMode, uint32) {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return os.FileMode(st.Mode & 0o7777), st.Uid
}

// A fresh per-uid default directory is made 0700 (and its parent), and a
// provider and a consumer work through it.
func TestSec2_TmpDefaultMadePrivate(t *testing.T) {
	dir := sec2TmpDefault(t)
	var log logbuf.Buffer
	if err := sec2Export(t, "file://?poll=200ms", &log); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Dir(dir), dir} {
		if m, uid := sec2Mode(t, d); m != 0o700 || int(uid) != os.Getuid() {
			t.Errorf("%s: mode %04o uid %d, want 0700 uid %d", d, m, uid, os.Getuid())
		}
	}
	if err := freg1Call(""); err != nil {
		t.Fatalf("call through file:// (%s): %v", dir, err)
	}
}

// A per-uid default directory that another user could have made (world-
// or group-writable, owned by another uid, a symbolic link) is refused by
// providers and consumers alike, whether the URL leaves the directory to
// the default or names it, with an error naming the path, the owner, the
// mode and what to do; nothing is written into it.
func TestSec2_TmpDefaultSquattedIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  []string
	}{
		{"world-writable registry", func(t *testing.T, dir string) {
			sec2Mkdir(t, dir, 0o700)
			if err := os.Chmod(dir, 0o777); err != nil {
				t.Fatal(err)
			}
		}, []string{"registry is writable by its group or by every user (owner uid " + strconv.Itoa(os.Getuid()), "mode 0777)"}},
		{"group-writable parent", func(t *testing.T, dir string) {
			sec2Mkdir(t, dir, 0o700)
			if err := os.Chmod(filepath.Dir(dir), 0o770); err != nil {
				t.Fatal(err)
			}
		}, []string{"airnode-" + strconv.Itoa(os.Getuid()) + " is writable by its group or by every user (owner uid " + strconv.Itoa(os.Getuid()), "mode 0770)"}},
		{"sticky world-writable parent", func(t *testing.T, dir string) {
			sec2Mkdir(t, dir, 0o700)
			if err := syscall.Chmod(filepath.Dir(dir), 0o1777); err != nil {
				t.Fatal(err)
			}
		}, []string{"mode 1777)"}},
		{"registry owned by nobody", func(t *testing.T, dir string) {
			sec2Mkdir(t, dir, 0o700)
			if err := os.Chown(dir, 65534, 65534); err != nil {
				t.Fatalf("chown 65534 (the test runs as root, as CI does): %v", err)
			}
		}, []string{"registry is owned by another user", "owner uid 65534", "mode 0700"}},
		{"parent owned by nobody", func(t *testing.T, dir string) {
			sec2Mkdir(t, dir, 0o700)
			if err := os.Chown(filepath.Dir(dir), 65534, 65534); err != nil {
				t.Fatalf("chown 65534 (the test runs as root, as CI does): %v", err)
			}
		}, []string{"is owned by another user", "owner uid 65534"}},
		{"parent a symbolic link", func(t *testing.T, dir string) {
			elsewhere := t.TempDir()
			if err := os.Chmod(elsewhere, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(elsewhere, filepath.Dir(dir)); err != nil {
				t.Fatal(err)
			}
		}, []string{"is a symbolic link"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := sec2TmpDefault(t)
			tc.setup(t, dir)
			common := []string{"refusing the default directory " + dir, "rm -rf " + filepath.Dir(dir), "--registry file:///DIR"}
			check := func(what string, err error) {
				t.Helper()
				if err == nil {
					t.Fatalf("%s: no error", what)
				}
				for _, w := range append(tc.want, common...) {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%s: error %q\nwant it to contain %q", what, err, w)
					}
				}
				if strings.Contains(err.Error(), "S3cr3tTok3n") {
					t.Errorf("%s: error shows the token: %v", what, err)
				}
			}
			var log logbuf.Buffer
			check("provider on file://", sec2Export(t, "file://?poll=200ms", &log))
			check("provider on file://"+dir, sec2Export(t, "file://"+dir+"?poll=200ms", &log))
			check("consumer on file://", freg1Call(""))
			r, err := file.Builder{}.Build(spi.MustParse("file://"))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			_, err = r.Services(context.Background())
			check("Services", err)
			if _, err := os.Stat(filepath.Join(dir, file.OwnersDir)); err == nil {
				t.Errorf("%s was written into the refused directory", file.OwnersDir)
			}
		})
	}
}

// sec2Mkdir makes dir and its parent with mode (whatever the umask).
func sec2Mkdir(t *testing.T, dir string, mode os.FileMode) {
	t.Helper()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Mkdir(d, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, mode); err != nil {
			t.Fatal(err)
		}
	}
}

// A directory the URL names elsewhere is not checked: a group may share
// it by design (umask 002, chmod 2775), or even everyone.
func TestSec2_NamedDirNotChecked(t *testing.T) {
	sec2TmpDefault(t)
	dir := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o2777); err != nil {
		t.Fatal(err)
	}
	var log logbuf.Buffer
	if err := sec2Export(t, "file://"+dir+"?poll=200ms", &log); err != nil {
		t.Fatal(err)
	}
	if err := freg1Call(dir); err != nil {
		t.Fatal(err)
	}
}

// A running provider whose per-uid default directory is removed (a tmp
// cleaner) and re-made by someone else, world-writable, before its keeper
// puts its entries back, does not write them there: it warns instead.
func TestSec2_KeeperRefusesSquatAfterRemoval(t *testing.T) {
	dir := sec2TmpDefault(t)
	var log logbuf.Buffer
	if err := sec2Export(t, "file://?poll=200ms", &log); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Dir(dir)); err != nil {
		t.Fatal(err)
	}
	sec2Mkdir(t, dir, 0o777)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(log.String(), "refusing the default directory") {
		if time.Now().After(deadline) {
			t.Fatalf("no warning about the re-made directory within 10s; log:\n%s", log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(600 * time.Millisecond) // three more polls
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != dir {
			t.Errorf("the provider wrote %s into the re-made directory", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// sec2Hash is the name the registry gives an entry of a URL whose
// Redacted form is s.
func sec2Hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "h-" + hex.EncodeToString(sum[:20])
}

// sec2Names returns the entry names (before "@") in dir.
func sec2Names(t *testing.T, dir string) map[string]os.FileMode {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]os.FileMode{}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		names[e.Name()[:strings.LastIndex(e.Name(), file.Separator)]] = fi.Mode().Perm()
	}
	return names
}

// The name of an entry with a token does not depend on the token (it was
// a hash of the whole URL, which let a local user test guessed tokens
// offline): two URLs that differ only in their token get one name, the
// hash of the URL with the token as ***. One registry holding both keeps
// two entries, and each goes with its own Unregister.
func TestSec2_TokenEntryNameIndependentOfToken(t *testing.T) {
	ctx := context.Background()
	base := "airnode://127.0.0.1:20880/demo.Echo?methods=Echo&side=provider&timestamp=1796170098937"
	u1 := spi.MustParse(base + "&token=S3cr3tTok3n")
	u2 := spi.MustParse(base + "&token=0ther")
	redacted := spi.MustParse(base + "&token=x").Redacted()
	if !strings.Contains(redacted, "token=***") {
		t.Fatalf("Redacted = %q", redacted)
	}
	providers := func(d string) string { return filepath.Join(d, "demo.Echo", file.Providers) }

	d1, d2 := t.TempDir(), t.TempDir()
	for d, u := range map[string]spi.URL{d1: u1, d2: u2} {
		r, err := file.Builder{}.Build(spi.MustParse("file://" + d))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if err := r.Register(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	n1, n2 := sec2Names(t, providers(d1)), sec2Names(t, providers(d2))
	want := sec2Hash(redacted)
	for i, n := range []map[string]os.FileMode{n1, n2} {
		if len(n) != 1 {
			t.Fatalf("registry %d: entries %v, want one", i+1, n)
		}
		for name, mode := range n {
			if name != want {
				t.Errorf("registry %d: entry name %q, want %q (the hash of %s)", i+1, name, want, redacted)
			}
			if name == sec2Hash(u1.String()) || name == sec2Hash(u2.String()) {
				t.Errorf("registry %d: entry name %q is the hash of the URL with its token", i+1, name)
			}
			if mode&0o007 != 0 {
				t.Errorf("registry %d: token entry mode %04o, readable by others", i+1, mode)
			}
		}
	}

	// both in one registry: two entries, each its own
	d3 := t.TempDir()
	r, err := file.Builder{}.Build(spi.MustParse("file://" + d3))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, u := range []spi.URL{u1, u2} {
		if err := r.Register(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	consumer := spi.MustParse("airnode:///demo.Echo")
	got, err := r.Lookup(ctx, consumer)
	if err != nil || len(got) != 2 {
		t.Fatalf("Lookup = %v, %v; want both URLs", got, err)
	}
	if err := r.Unregister(ctx, u1); err != nil {
		t.Fatal(err)
	}
	got, err = r.Lookup(ctx, consumer)
	if err != nil || len(got) != 1 || got[0].String() != u2.String() {
		t.Fatalf("after Unregister(u1): Lookup = %v, %v; want u2 only", got, err)
	}
}

// A dead entry of the older format (no owner id, locked itself) with a
// token, named as older versions named it (a hash of the whole URL), is
// still recognised as a registry's and removed, not kept as written by
// hand.
func TestSec2_LegacyTokenNameStillRemovedWhenDead(t *testing.T) {
	ctx := context.Background()
	d := t.TempDir()
	u := spi.MustParse("airnode://127.0.0.1:20880/demo.Echo?side=provider&timestamp=1&token=S3cr3tTok3n")
	pd := filepath.Join(d, "demo.Echo", file.Providers)
	if err := os.MkdirAll(pd, 0o755); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(pd, sec2Hash(u.String()))
	if err := os.WriteFile(old, []byte(u.String()+"\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	r, err := file.Builder{}.Build(spi.MustParse("file://" + d))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.Lookup(ctx, spi.MustParse("airnode:///demo.Echo"))
	if err != nil || len(got) != 0 {
		t.Fatalf("Lookup = %v, %v; want none", got, err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("dead older-format entry %s kept (stat: %v)", old, err)
	}
	if iv := invalidEntries(t, r, spi.MustParse("airnode:///demo.Echo")); len(iv) != 0 {
		t.Errorf("Invalid = %v, want none", iv)
	}
}

// Errors and lines of the file registry show a URL's token as ***: the
// "already registered" error of a provider URL another live registry
// holds.
func TestSec2_AlreadyRegisteredHidesToken(t *testing.T) {
	ctx := context.Background()
	d := t.TempDir()
	u := spi.MustParse("airnode://127.0.0.1:20880/demo.Echo?side=provider&timestamp=1&token=S3cr3tTok3n")
	var regs []spi.Registry
	for range 2 {
		r, err := file.Builder{}.Build(spi.MustParse("file://" + d))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		regs = append(regs, r)
	}
	if err := regs[0].Register(ctx, u); err != nil {
		t.Fatal(err)
	}
	err := regs[1].Register(ctx, spi.MustParse("airnode://127.0.0.1:20880/demo.Echo?side=provider&timestamp=1&token=0ther"))
	if err == nil || !strings.Contains(err.Error(), "already registered") {
		t.Fatalf("second Register: %v, want already registered", err)
	}
	if strings.Contains(err.Error(), "0ther") || !strings.Contains(err.Error(), "token=***") {
		t.Errorf("error does not hide the token: %v", err)
	}
	_, err = file.Builder{}.Build(spi.MustParse("file:///x?token=S3cr3tTok3n"))
	if err == nil || strings.Contains(err.Error(), "S3cr3tTok3n") {
		t.Errorf("Build with an unknown key token: %v, want an error without the token", err)
	}
}
