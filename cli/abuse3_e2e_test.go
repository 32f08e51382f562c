package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Tester34 finding 9: a negative number argument was taken for a flag
// ("unknown shorthand flag: '1' in -1"); the error now says to put "--"
// before it, and after "--" the provider gets it.
func TestAbuse3_NegativeNumberArgumentSaysDoubleDash(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	for _, n := range []string{"-1", "-0.5", "-1e3"} {
		r := call(t, noAirnodeEnv, p.url("demo.Echo"), "Sleep", n)
		expectUsage(t, r, "airnode: call: "+n+" is taken as a flag", `goes after "--"`, "airnode call ... -- "+n)
	}
	expectFail(t, call(t, noAirnodeEnv, p.url("demo.Echo"), "Sleep", "--", "-1"), "BAD_REQUEST: ", "sleep -1 ms")
	// a flag typo that is no number keeps pflag's message
	expectUsage(t, call(t, noAirnodeEnv, p.url("demo.Echo"), "Sleep", "-x"), "airnode: call: unknown shorthand flag: 'x' in -x")
	if r := runCommand(t, 10*time.Second, noAirnodeEnv, "call", "--help"); !strings.Contains(r.stdout, `Echo -- -5          # "--" before a negative number`) {
		t.Fatalf("call --help does not show \"--\":\n%s", r.stdout)
	}
}

// Tester34 finding 10: flag values that pflag refused in Go's words
// (strconv.ParseInt, strconv.ParseBool) name the command, the flag, the
// value and what it takes; --req and --resp take the sizes the URL key
// payload takes (64KiB).
func TestAbuse3_FlagValueMessages(t *testing.T) {
	for _, c := range []struct {
		sub  string
		args []string
		want string
	}{
		{"bench", []string{"--req", "1TB", "airnode://127.0.0.1:1/demo.Echo"}, `airnode: bench: --req "1TB": want a byte size: a whole number of bytes (100), or with a unit B, KB, MB, GB (powers of 1000) or KiB, MiB, GiB (powers of 1024): 64KiB, 8MiB` + "\n"},
		{"bench", []string{"--resp", "lots", "airnode://127.0.0.1:1/demo.Echo"}, `airnode: bench: --resp "lots": want a byte size:`},
		{"bench", []string{"-c", "ten", "airnode://127.0.0.1:1/demo.Echo"}, `airnode: bench: --concurrency "ten": want a whole number` + "\n"},
		{"bench", []string{"-n", "99999999999999999999", "airnode://127.0.0.1:1/demo.Echo"}, `airnode: bench: --calls "99999999999999999999": out of range: want a whole number from -9223372036854775808 to 9223372036854775807` + "\n"},
		{"serve", []string{"--listen", "127.0.0.1:0", "--demo=maybe"}, `airnode: serve: --demo "maybe": want true or false (also yes/no, on/off, 1/0, t/f); --demo alone is true` + "\n"},
		{"stats", []string{""}, `airnode: stats: ADDRESS "": want the host:port of serve --metrics (127.0.0.1:9090), not an empty argument` + "\n"},
		{"plugin", []string{"check", ""}, `airnode: plugin check: PATH "": want the path of a plugin binary (./bin/p2c), not an empty argument` + "\n"},
		{"plugin", []string{"check", os.TempDir()}, `airnode: plugin check: PATH "` + os.TempDir() + `" is a directory: want the path of a plugin binary (./bin/p2c)` + "\n"},
	} {
		r := runCommand(t, 20*time.Second, noAirnodeEnv, c.sub, c.args...)
		// a value the flag cannot parse is a usage error (exit 2, tester
		// nu41), and so is an empty argument (fix-p); a directory for a
		// plugin binary fails the check (exit 1), as cat's
		want := exitUsage
		if c.sub == "plugin" && len(c.args) > 1 && c.args[1] != "" {
			want = 1
		}
		if r.code != want || !strings.HasPrefix(r.stderr, c.want) || strings.Contains(r.stderr, "strconv") {
			t.Errorf("%s %q: exit %d, stderr %q; want %d and %q", c.sub, c.args, r.code, r.stderr, want, c.want)
		}
	}
	p := serve(t, "127.0.0.1:0", t.TempDir())
	r := runCommand(t, 30*time.Second, noAirnodeEnv, "bench", "--req", "64KiB", "--resp", "1KB", "-n", "20", "--json", p.url("demo.Echo"))
	if r.code != 0 || !strings.Contains(r.stdout, `"req": 65536`) || !strings.Contains(r.stdout, `"resp": 1000`) {
		t.Fatalf("bench --req 64KiB --resp 1KB: exit %d, stdout %.400q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// Tester34 findings 10 and 11: call's arguments and flags. An out-of-range
// float, nesting over encoding/json's limit, invalid UTF-8 and a lone
// surrogate escape (which encoding/json turns into U+FFFD silently), a
// port 0, a duplicate -a (as a duplicate -p is): each refused naming what
// was wrong and what is allowed.
func TestAbuse3_CallArgumentMessages(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	u := p.url("demo.Echo")
	expectUsage(t, call(t, noAirnodeEnv, u, "Echo", "1e400"), `airnode: call: argument "1e400": number 1e400 is out of range: want at most about 1.8e308 in magnitude (a float64); for a string or any parameter, pass it as a string: '"1e400"'`)
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	expectUsage(t, call(t, noAirnodeEnv, u, "Echo", deep), "airnode: call: argument ", "is nested more than 10000 arrays and objects deep (encoding/json's limit)")
	ok := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	expectOK(t, call(t, noAirnodeEnv, u, "Echo", ok), ok)
	expectUsage(t, call(t, noAirnodeEnv, u, "Echo", "\"ab\xff\xfe\""), `airnode: call: argument "\"ab\xff\xfe\"": invalid UTF-8 at byte offset 3 (0xff): want UTF-8 text`)
	expectUsage(t, call(t, noAirnodeEnv, u, "Echo", `["ok","a\ud800b"]`), `airnode: call: argument "[\"ok\",\"a\\ud800b\"]": \ud800 at byte offset 8 is half of a UTF-16 surrogate pair`)
	expectUsage(t, call(t, noAirnodeEnv, u, "Echo", `"\udc00"`), "airnode: call: ", `\udc00 at byte offset 1 is half`)
	expectOK(t, call(t, noAirnodeEnv, u, "Echo", `"a\ud83d\ude00b"`), `"a😀b"`)
	expectOK(t, call(t, noAirnodeEnv, u, "Echo", `"a\\ud800b"`), `"a\\ud800b"`) // an escaped backslash, no escape
	expectOK(t, call(t, noAirnodeEnv, u, "Echo", `"é"`), `"é"`)
	expectUsage(t, call(t, noAirnodeEnv, "airnode://127.0.0.1:0/demo.Echo", "Echo", "1"),
		`airnode: call: SERVICE_URL "airnode://127.0.0.1:0/demo.Echo": host "127.0.0.1": port 0: want a port from 1 to 65535`)
	expectUsage(t, call(t, noAirnodeEnv, "airnode://"+p.addr+",[::1]:0/demo.Echo", "Echo", "1"), "airnode: call: ", `host "::1": port 0: want a port from 1 to 65535`)
	expectUsage(t, call(t, noAirnodeEnv, "airnode://127.0.0.1/demo.Echo", "Echo", "1"), "airnode: call: ", `host "127.0.0.1" has no port`)
	expectUsage(t, call(t, noAirnodeEnv, "-a", "k=v", "-a", "j=1", "-a", "k=w", u, "Info"), `airnode: call: -a "k=v" and -a "k=w": key "k" given twice: give each attachment once`)
	expectUsage(t, runCommand(t, 20*time.Second, noAirnodeEnv, "bench", "-a", "k=v", "-a", "k=v", "-n", "1", u), `airnode: bench: -a "k=v" and -a "k=v": key "k" given twice`)
	r := call(t, noAirnodeEnv, "-a", "k=v", "-a", "j=1", u, "Info")
	if r.code != 0 || !strings.Contains(r.stdout, `"k":"v"`) || !strings.Contains(r.stdout, `"j":"1"`) {
		t.Fatalf("call -a k=v -a j=1 Info: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// Tester34 finding 11: registry ls --json --summary printed the full JSON,
// --summary silently dropped; the combination is refused.
func TestAbuse3_RegistryLsJSONSummaryRefused(t *testing.T) {
	dir := t.TempDir()
	r := runCommand(t, 20*time.Second, noAirnodeEnv, "registry", "ls", "--registry", "file://"+dir, "--json", "--summary")
	if r.code != 2 || r.stdout != "" || r.stderr != "airnode: registry ls: --json and --summary both given: give one (--json prints every provider as JSON, --summary one text line per service)\n" {
		t.Fatalf("registry ls --json --summary: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// countingReader yields n bytes of a JSON string ("aaa...) and counts
// what was read.
type countingReader struct {
	n, read atomic.Int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	left := c.n.Load() - c.read.Load()
	if left <= 0 {
		return 0, io.EOF
	}
	if int64(len(b)) > left {
		b = b[:left]
	}
	for i := range b {
		b[i] = 'a'
	}
	if c.read.Load() == 0 {
		b[0] = '"'
	}
	c.read.Add(int64(len(b)))
	return len(b), nil
}

// Tester34 finding 11: a 200 MB argument on standard input was read and
// encoded whole (4.2 s, 1.07 GB max RSS) before the payload limit refused
// it. call now stops reading at the limit + 1 byte and refuses at once.
func TestAbuse3_HugeStdinArgumentStopsAtTheLimit(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	in := &countingReader{}
	in.n.Store(200 << 20)
	cmd := exec.CommandContext(ctx, binary, "call", p.url("demo.Echo"), "Echo", "@-")
	cmd.Env = append(hostEnviron(), noAirnodeEnv...)
	cmd.Stdin = in
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	elapsed := time.Since(start)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("call ... @- with 200 MiB: %v, stderr %q; want exit 1", err, errb.String())
	}
	want := "CLIENT_ERROR: argument @-: more than 8388608 bytes (read stopped there): over the payload limit of 8388608 bytes (URL key payload, default 8MiB)"
	if !strings.HasPrefix(errb.String(), want) {
		t.Fatalf("stderr %q; want it to start %q", errb.String(), want)
	}
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB
	t.Logf("200 MiB offered: %d bytes read by call, %v, max RSS %d KiB", in.read.Load(), elapsed, rss)
	if got := in.read.Load(); got > 9<<20 {
		t.Errorf("call read %d bytes of standard input; want at most about 8 MiB + 1 (and the pipe's buffer)", got)
	}
	if rss > 200<<10 {
		t.Errorf("max RSS %d KiB; want well under 200 MiB", rss)
	}
	// a file over the limit is refused by its size, unread; -p payload
	// raises the limit
	big := t.TempDir() + "/big.json"
	if err := os.WriteFile(big, []byte(`"`+strings.Repeat("b", 2<<20)+`"`), 0o600); err != nil {
		t.Fatal(err)
	}
	expectFail(t, call(t, noAirnodeEnv, "-p", "payload=1MiB", p.url("demo.Echo"), "Echo", "@"+big), "CLIENT_ERROR: argument @"+big+": 2097154 bytes: over the payload limit of 1048576 bytes")
}

// Tester34 finding 7: with a listed provider whose first connection hangs
// (SIGSTOPped: its kernel accepts TCP, nothing answers, until
// connect.timeout), every `airnode call` took a second more: it waited
// callSettleMax for that attempt. It now waits a few times what the first
// connection took (at least 100 ms): the fastest of 3 calls is under
// 800 ms where it was over 1 s.
func TestAbuse3_CallDoesNotWaitASecondForAHungProvider(t *testing.T) {
	dir := t.TempDir()
	p := serve(t, "127.0.0.1:0", dir)
	hung := serveStopped(t, dir)
	fastest := time.Hour
	for range 3 {
		r := call(t, noAirnodeEnv, "--registry", "file://"+dir, "demo.Echo", "Echo", `"x"`)
		expectOK(t, r, `"x"`)
		t.Logf("call with %s hung and %s up: %v", hung.addr, p.addr, r.elapsed)
		fastest = min(fastest, r.elapsed)
	}
	if fastest > 800*time.Millisecond {
		t.Fatalf("fastest of 3 calls took %v; want under 800 ms (a hung listed provider costs settleWait, not callSettleMax)", fastest)
	}
}

// serveStopped starts serve with a file registry in regDir, as serve
// does, and stops it with SIGSTOP (its kernel still accepts TCP, nothing
// answers: a hung provider, listed); it is continued at cleanup, before
// serve's cleanup kills it.
func serveStopped(t *testing.T, regDir string) *provider {
	t.Helper()
	p := serve(t, "127.0.0.1:0", regDir)
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.cmd.Process.Signal(syscall.SIGCONT) })
	return p
}
