package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLsCountsUnreadableEntries (tester49 finding 7): a user who may not
// read a registry's entries (a provider with a token writes its entry
// readable by its group only) got "no services" and exit 0. registry ls,
// run here as nobody (uid 65534; the tests run as root, as CI does),
// fails when it could read nothing, naming the count and the first entry,
// and, when it could read something, lists it after a line counting
// what it could not read.
func TestLsCountsUnreadableEntries(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Fatalf("this test runs ls as uid 65534 and needs root (as CI runs it); uid is %d", os.Getuid())
	}
	// A directory nobody can enter, holding a copy of the binary and
	// the registry (the package's temporary directories are 0700).
	base, err := os.MkdirTemp("", "airnode-f5-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "airnode")
	b, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	regDir := filepath.Join(base, "reg")
	reg := "file://" + regDir
	asNobody := func(args ...string) result {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"registry", "ls", "--registry", reg}, args...)...)
		cmd.Env = append(hostEnviron(), append([]string{"HOME=" + base, "XDG_RUNTIME_DIR=", "XDG_CACHE_HOME=" + base}, noAirnodeEnv...)...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		r := result{stdout: out.String(), stderr: errb.String()}
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			r.code = ee.ExitCode()
		case err != nil:
			t.Fatalf("registry ls %v as nobody: %v", args, err)
		}
		return r
	}

	startServe(t, "127.0.0.1:0", reg, noAirnodeEnv, "", "-p", "token=S3cr3t", "--shutdown-wait", "0s")
	entries, err := filepath.Glob(filepath.Join(regDir, "demo.Echo", "providers", "*"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("the token provider's entries: %v, %v; want one", entries, err)
	}
	for _, args := range [][]string{nil, {"demo.Echo"}, {"--json"}} {
		r := asNobody(args...)
		t.Logf("ls %v as nobody, the only entry unreadable: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		expectFail(t, r, "airnode: registry ls: nothing could be read in "+reg+": 1 entry could not be read (first: "+entries[0]+": permission denied",
			"list it as a user who may read the providers' entries")
	}

	startServe(t, "127.0.0.1:0", reg, noAirnodeEnv, "", "-p", "group=open", "--shutdown-wait", "0s")
	r := asNobody()
	t.Logf("ls as nobody, one entry readable: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	first, _, _ := strings.Cut(r.stdout, "\n")
	if want := "1 entry of " + reg + " could not be read and is not listed (first: " + entries[0] + ": permission denied"; r.code != 0 || !strings.HasPrefix(first, want) {
		t.Errorf("ls as nobody with one readable service: exit %d, first line %q; want exit 0 and it to start %q", r.code, first, want)
	}
	if !strings.Contains(r.stdout, "open/demo.Echo") || strings.Contains(r.stdout, "\ndemo.Echo") {
		t.Errorf("ls as nobody lists %q; want open/demo.Echo only", r.stdout)
	}
	r = asNobody("--json")
	var out struct {
		Unreadable *struct {
			Count int    `json:"count"`
			First string `json:"first"`
		} `json:"unreadable"`
		Services []struct {
			Service string `json:"service"`
		} `json:"services"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != 0 {
		t.Fatalf("ls --json as nobody: exit %d, %v: %q", r.code, err, r.stdout)
	}
	if out.Unreadable == nil || out.Unreadable.Count != 1 || !strings.HasPrefix(out.Unreadable.First, entries[0]+": permission denied") ||
		len(out.Services) != 1 || out.Services[0].Service != "open/demo.Echo" {
		t.Errorf("ls --json as nobody: %s; want unreadable count 1 naming %s, and open/demo.Echo listed", r.stdout, entries[0])
	}
	// Root reads both: no line about unreadable entries.
	if r := runCommand(t, 20*time.Second, noAirnodeEnv, "registry", "ls", "--registry", reg); r.code != 0 || strings.Contains(r.stdout, "could not be read") {
		t.Errorf("ls as root: exit %d, stdout %q", r.code, r.stdout)
	}
}
