package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An ARG_JSON of @PATH is read from the file, @- from standard input
// (new-user finding: arguments over ~128 KiB do not fit a command line,
// and there was no other way to give them). A 1 MiB string goes through a
// real provider both ways; a missing file, a second @- and bad JSON in a
// file are refused naming the argument, the JSON error cut short.
func TestCallArgumentFromFileOrStdin(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	big := strings.Repeat("x", 1<<20)
	dir := t.TempDir()
	path := filepath.Join(dir, "big.json")
	if err := os.WriteFile(path, []byte(`"`+big+`"`), 0o600); err != nil {
		t.Fatal(err)
	}
	expectOK(t, call(t, nil, p.url("demo.Echo"), "Echo", "@"+path), `"`+big+`"`)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "call", p.url("demo.Echo"), "Echo", "@-")
	cmd.Stdin = strings.NewReader(`"` + big + `"`)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil || strings.TrimSpace(out.String()) != `"`+big+`"` {
		t.Fatalf("call ... @- with 1 MiB on stdin: %v, stdout %d bytes, stderr %q", err, out.Len(), errb.String())
	}

	expectFail(t, call(t, nil, p.url("demo.Echo"), "Echo", "@"+filepath.Join(dir, "missing.json")), "CLIENT_ERROR", "missing.json", "no such file")
	expectUsage(t, call(t, nil, p.url("demo.Echo"), "Echo", "@-", "@-"), "airnode: call: ", "standard input can be read once")
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(strings.Repeat("y", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	r := call(t, nil, p.url("demo.Echo"), "Echo", "@"+bad)
	expectUsage(t, r, "airnode: call: ", "argument @"+bad+" (1000 bytes)", "is not JSON", "(1000 bytes)") // fix-p: as bench --args
	empty := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	expectUsage(t, call(t, nil, p.url("demo.Echo"), "Echo", "@"+empty), "airnode: call: ", "argument @"+empty+" (0 bytes)", "is not JSON")
	if len(r.stderr) > 400 {
		t.Errorf("error for a 1000-byte bad argument is %d bytes, want it cut short: %q", len(r.stderr), r.stderr)
	}
}
