// Package filetest helps tests put hand-written entries into a file
// registry directory, as an operator or a script would.
package filetest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// HandEntry writes content as an entry of the older format named name in
// dir (a service's providers or consumers directory, which must exist),
// the way docs/wire.md says a hand-written entry stays live: written to
// a temporary name, flocked exclusively, renamed into place, and kept
// locked by this process until the test ends (so no reader ever sees it
// dead and removes it). It fails the test on any error.
func HandEntry(t testing.TB, dir, name, content string) {
	t.Helper()
	tmp := filepath.Join(dir, ".tmp-"+name)
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(tmp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}
