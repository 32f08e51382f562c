package file_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/airnode/airnode/extensions/registry/file"
	"github.com/airnode/airnode/spi"
)

// TestT16_11_ModesFollowUmask (tester16 finding 11): the registry's
// directories and entries are 0777 and 0666 less the umask (they were
// 0755 and 0644 whatever it was), so with umask 002 in a setgid group
// directory the users of the group can share one registry; an entry whose
// URL has a token is 0640 less the umask and its name does not show the
// token.
func TestT16_11_ModesFollowUmask(t *testing.T) {
	old := syscall.Umask(0o002)
	t.Cleanup(func() { syscall.Umask(old) })
	dir := filepath.Join(t.TempDir(), "reg")
	if err := os.Mkdir(dir, 0o775); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o775|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	r, err := file.Builder{}.Build(spi.MustParse("file://" + dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	ctx := context.Background()
	if err := r.Register(ctx, spi.MustParse("airnode://127.0.0.1:1/demo.Echo?side=provider")); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(ctx, spi.MustParse("airnode://127.0.0.1:2/demo.Echo?side=provider&token=s3cr3t")); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Join(dir, "demo.Echo"), filepath.Join(dir, "demo.Echo", "providers")} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode() & (os.ModePerm | os.ModeSetgid); got != 0o775|os.ModeSetgid {
			t.Errorf("%s: mode %v, want %v (0777 less umask 002, setgid inherited)", d, got, 0o775|os.ModeSetgid)
		}
	}
	ents, err := os.ReadDir(filepath.Join(dir, "demo.Echo", "providers"))
	if err != nil || len(ents) != 2 {
		t.Fatalf("entries: %v, %v", ents, err)
	}
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "demo.Echo", "providers", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o664)
		if strings.Contains(string(b), "token=") {
			want = 0o640
			if strings.Contains(e.Name(), "s3cr3t") || !strings.HasPrefix(e.Name(), "h-") {
				t.Errorf("the token entry is named %q: the token shows in a directory listing", e.Name())
			}
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("entry %s: mode %v, want %v", e.Name(), got, want)
		}
	}
	got, err := r.Lookup(ctx, spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer"))
	if err != nil || len(got) != 2 {
		t.Fatalf("Lookup = %v, %v; want both providers", got, err)
	}
	if v, _ := got[1].Param("token"); v != "s3cr3t" {
		t.Errorf("token entry read back as %v", got[1])
	}
}
