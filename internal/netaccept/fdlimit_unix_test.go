//go:build unix

package netaccept

import (
	"syscall"
	"testing"
)

// OpenFileLimit reports the soft RLIMIT_NOFILE, as getrlimit(2) does.
func TestOpenFileLimit(t *testing.T) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	n, ok := OpenFileLimit()
	if uint64(rl.Cur) < 1<<62 && (!ok || n != uint64(rl.Cur)) {
		t.Fatalf("OpenFileLimit() = %d, %v; getrlimit's soft limit is %d", n, ok, rl.Cur)
	}
}
