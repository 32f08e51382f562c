// Package testbin builds the binaries a package's tests run as real
// processes (plugins) once per test binary, and runs the tests with a
// check for goroutines left behind. Used from TestMain.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// Main builds pkgs (import paths, or directories relative to the package
// under test such as "./testdata/moody") with one `go build -o DIR/` into
// a fresh temporary directory, calls set with it (a binary is named
// after its package's directory: DIR/moody), runs m, removes the
// directory and, when the tests passed, fails the run on goroutines left
// behind (goleak). It exits the process with the tests' status; a failed
// build exits 1 before any test runs.
func Main(m *testing.M, set func(dir string), pkgs ...string) {
	d, err := os.MkdirTemp("", "airnode-testbin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testbin:", err)
		os.Exit(1)
	}
	cmd := exec.Command("go", append([]string{"build", "-o", d + string(filepath.Separator)}, pkgs...)...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building test binaries:", err)
		os.RemoveAll(d)
		os.Exit(1)
	}
	set(d)
	code := m.Run()
	os.RemoveAll(d)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// NoExitSleep is the environment entry for a child process of a test
// binary (os.Args[0] run again) that ends with it: the GORACE of this
// process with atexit_sleep_ms=0 added, because a child built with -race
// otherwise sleeps 1 s as it exits, in the test's cleanup (races are
// still reported). Append it to the child's cmd.Env.
func NoExitSleep() string { return "GORACE=" + os.Getenv("GORACE") + " atexit_sleep_ms=0" }

// ReplaceFile puts a copy of the file src at dst (mode 0755) the way an
// upgrade replaces a binary: it writes dst+".new" and renames it over
// dst, so dst is a new inode and never seen half written (a running
// binary cannot be rewritten in place, only replaced). dst need not
// exist. Any error fails the test (t.Fatal).
func ReplaceFile(t testing.TB, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst+".new", b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dst+".new", dst); err != nil {
		t.Fatal(err)
	}
}
