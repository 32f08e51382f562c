package cli

import (
	"net"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/logbuf"
)

// TestCI_RegistryLsSIGINTWhileWaitingForZooKeeper (fix-ci, tester93 #1):
// registry ls of a ZooKeeper nobody listens for waits its connect.timeout
// (5s); Ctrl-C meanwhile ended it only at that timeout, exit 1 ("no
// session ... unreachable for 5s"), or killed it without a word. It now
// stops at once, exit 130 with "registry ls: interrupted by SIGINT", as
// registry watch, call and bench do. The real binary.
func TestCI_RegistryLsSIGINTWhileWaitingForZooKeeper(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close() // nothing listens there: ls waits for a session
	var out, errb logbuf.Buffer
	cmd := exec.Command(binary, "registry", "ls", "--registry", "zookeeper://"+dead+"?root=/x")
	cmd.Env = append(hostEnviron(), noAirnodeEnv...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	time.Sleep(time.Second) // waiting for the session (connect.timeout 5s)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatal("registry ls did not exit within 10 s of SIGINT")
	}
	took := time.Since(sent)
	if code := cmd.ProcessState.ExitCode(); code != 130 || errb.String() != "airnode: registry ls: interrupted by SIGINT\n" || out.String() != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want 130 and only the interrupted line", code, out.String(), errb.String())
	}
	if took > 2*time.Second { // it ended at connect.timeout: 4 s after the signal
		t.Errorf("registry ls exited %v after SIGINT; want at once (well under connect.timeout's 4 s left)", took)
	}
}

// TestCI_DefaultTimeoutServerTimeoutSaysSo (fix-ci, tester93 #2):
// README's `call demo.Echo Sleep 2000` failed SERVER_TIMEOUT under the 1 s
// default timeout without saying that the timeout was the default or
// how to change it. It now says "timeout 1s, the default; --timeout to
// change"; with --timeout given it does not claim the default, and the
// README's call with --timeout 3s succeeds. The real binary and provider.
func TestCI_DefaultTimeoutServerTimeoutSaysSo(t *testing.T) {
	t.Parallel()
	p := serve(t, "127.0.0.1:0", t.TempDir())
	const note = "timeout 1s, the default; --timeout to change"
	r := call(t, noAirnodeEnv, p.url("demo.Echo"), "Sleep", "2000")
	expectFail(t, r, "SERVER_TIMEOUT: ", note)
	r = call(t, noAirnodeEnv, "--timeout", "1s", p.url("demo.Echo"), "Sleep", "2000")
	expectFail(t, r, "SERVER_TIMEOUT: ")
	if strings.Contains(r.stderr, "the default") {
		t.Errorf("--timeout 1s given: stderr %q says the default", r.stderr)
	}
	r = call(t, noAirnodeEnv, p.url("demo.Echo"), "Sleep", "2000", "--timeout", "3s")
	expectOK(t, r, "2000")
}

// TestCI_CallArgumentsSwappedOrNotAService (fix-ci, tester93 #3): `call
// Echo demo.Echo '"x"'` (SERVICE and METHOD swapped) waited 2.2 s for a
// provider of "Echo" and failed SERVICE_NOT_FOUND; `call '"hi"' demo.Echo`
// (JSON where the service goes) did the same. Both are usage errors now,
// at once: the first asks whether they were swapped, the second names what
// a service name is. The real binary; nothing is dialled.
func TestCI_CallArgumentsSwappedOrNotAService(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		has  []string
	}{
		{[]string{"Echo", "demo.Echo", `"x"`}, []string{`METHOD "demo.Echo" holds a "."`, `did you swap SERVICE and METHOD? did you mean service "demo.Echo", method "Echo"? (call demo.Echo Echo ...;`}},
		{[]string{"g/Echo:1.0", "demo.Echo"}, []string{`did you swap SERVICE and METHOD? did you mean service "g/demo.Echo:1.0", method "Echo"? (call g/demo.Echo:1.0 Echo ...;`}},
		{[]string{"Echo:1.0?timeout=2s", "demo.Echo"}, []string{`did you mean service "demo.Echo:1.0?timeout=2s", method "Echo"? (call 'demo.Echo:1.0?timeout=2s' Echo ...;`}},
		{[]string{`"hi"`, "demo.Echo", `"x"`}, []string{`SERVICE_URL "\"hi\"": "\"hi\"" is not a service name: a service name (the interface) is a dotted path of letters, digits`}},
		{[]string{"demo Echo", "Echo"}, []string{`"demo Echo" is not a service name`}},
	} {
		r := runCommand(t, 20*time.Second, noAirnodeEnv, "call", c.args...)
		expectUsage(t, r, "airnode: call: ", c.has...)
		if r.elapsed > 2*time.Second || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("call %q: took %v, stderr %q; want one line at once", c.args, r.elapsed, r.stderr)
		}
	}
	// a service key without a dot and a method without one stay a call
	// (SERVICE_NOT_FOUND of the registry), as does a Java-style name
	r := runCommand(t, 20*time.Second, noAirnodeEnv, "call", "--registry", "memory://", "--timeout", "300ms", "Echo", "Echo")
	expectFail(t, r, "SERVICE_NOT_FOUND: ")
}

// TestCI_ServeExtraArgumentHints (fix-ci, tester93 #4): `serve --demo
// false` said only `unexpected argument "false"`: a bool flag takes its
// value after "=", which the error now says (--demo=false); `serve
// 127.0.0.1:PORT` hints --listen. The real binary: usage errors, exit 2.
func TestCI_ServeExtraArgumentHints(t *testing.T) {
	t.Parallel()
	r := runCommand(t, 20*time.Second, noAirnodeEnv, "serve", "--demo", "false")
	expectUsage(t, r, `airnode: serve: unexpected argument "false": it takes no arguments; a bool flag's value goes after "=": --demo=false (usage: `)
	r = runCommand(t, 20*time.Second, noAirnodeEnv, "serve", "127.0.0.1:36749")
	expectUsage(t, r, `airnode: serve: unexpected argument "127.0.0.1:36749": it takes no arguments; to listen on it: --listen 127.0.0.1:36749 (usage: `)
	r = runCommand(t, 20*time.Second, noAirnodeEnv, "serve", "stray")
	expectUsage(t, r, `airnode: serve: unexpected argument "stray": it takes no arguments (usage: `)
}
