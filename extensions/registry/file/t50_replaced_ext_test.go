package file_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/spi"
)

// nu50 finding 2: an entry replaced by a rename (sed -i, an editor's
// save) or removed (rm) was put back with only an Info naming no file.
// Now each is a Warn naming the file and, replaced, what it held
// (redacted: no token), as an edit in place is; the whole directory
// removed stays the one owner lock file Warn, not one per entry.
func TestT50_EntryReplacedOrRemovedWarnsNamingTheFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "reg")
	var log logbuf.Buffer
	r := buildLogged(t, "file://"+dir+"?poll=50ms", &log)
	ctx := context.Background()
	for _, port := range []string{"1", "2", "3"} {
		u := spi.MustParse("airnode://127.0.0.1:" + port + "/demo.Echo?side=provider&token=s3cretT50&weight=100")
		if err := r.Register(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	entryOf := func(port string) (path, content string) {
		t.Helper()
		ents, _ := filepath.Glob(filepath.Join(dir, "demo.Echo", "providers", "*"))
		for _, e := range ents {
			b, err := os.ReadFile(e)
			if err == nil && strings.Contains(string(b), "127.0.0.1:"+port+"/") {
				return e, string(b)
			}
		}
		t.Fatalf("no entry for port %s among %v", port, ents)
		return "", ""
	}
	putBack := func(what, port, want string) {
		t.Helper()
		waitFor(t, what+": entry put back", 5*time.Second, func() bool {
			ents, _ := filepath.Glob(filepath.Join(dir, "demo.Echo", "providers", "*"))
			for _, e := range ents {
				if b, err := os.ReadFile(e); err == nil && string(b) == want {
					return true
				}
			}
			return false
		})
	}

	// replaced: sed -i writes a new file and renames it over the entry
	path, want := entryOf("1")
	mark := len(log.String())
	tmp := filepath.Join(filepath.Dir(path), ".sedT50")
	if err := os.WriteFile(tmp, []byte(strings.Replace(want, "weight=100", "weight=0", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	putBack("replaced", "1", want)
	const replaced = "level=WARN msg=\"entry replaced by another file"
	waitFor(t, "replaced: Warn", 5*time.Second, func() bool { return strings.Contains(log.String()[mark:], replaced) })
	time.Sleep(300 * time.Millisecond) // 6 polls: put back once
	s := log.String()[mark:]
	if strings.Count(s, "level=WARN") != 1 || !strings.Contains(s, "path="+path) || !strings.Contains(s, "weight=0") {
		t.Errorf("replaced: want one Warn naming %s and what it held (weight=0), got:\n%s", path, s)
	}

	// removed: rm
	path, want = entryOf("2")
	mark = len(log.String())
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	putBack("removed", "2", want)
	const removed = "level=WARN msg=\"entry removed by someone else; re-created\""
	waitFor(t, "removed: Warn", 5*time.Second, func() bool { return strings.Contains(log.String()[mark:], removed) })
	time.Sleep(300 * time.Millisecond)
	s = log.String()[mark:]
	if strings.Count(s, "level=WARN") != 1 || !strings.Contains(s, "path="+path) {
		t.Errorf("removed: want one Warn naming %s, got:\n%s", path, s)
	}

	// the whole directory removed: the owner lock file's one Warn
	var held []string
	for _, port := range []string{"1", "2", "3"} {
		_, c := entryOf(port)
		held = append(held, c)
	}
	mark = len(log.String())
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	for i, port := range []string{"1", "2", "3"} {
		putBack("rm -rf", port, held[i])
	}
	time.Sleep(300 * time.Millisecond)
	s = log.String()[mark:]
	if strings.Count(s, "level=WARN") != 1 || !strings.Contains(s, "owner lock file re-created") || !strings.Contains(s, "entries=3") {
		t.Errorf("rm -rf of the registry: want the one owner lock file Warn (entries=3), got:\n%s", s)
	}

	if all := log.String(); strings.Contains(all, "s3cretT50") {
		t.Errorf("a token is logged:\n%s", all)
	}
}
