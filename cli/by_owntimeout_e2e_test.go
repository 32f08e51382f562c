package cli

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// tester90 #1: a provider serving with -p Sleep.timeout=300ms cut `call
// --timeout 2s ... Sleep 500` to 300 ms (SERVER_TIMEOUT): --timeout was
// the consumer's service-level URL key, which Dubbo's order puts below
// the provider's method-level one. --timeout is now the call's own
// timeout (the kernel's "timeout" attachment, Dubbo's per-call
// RpcContext timeout) and beats it, for call and bench; a URL key (-p
// timeout=) keeps Dubbo's order, a command line's method-level key still
// decides each attempt, and list --explain says what a call's own
// timeout does.
func TestBY_TimeoutFlagBeatsProvidersMethodKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	serve(t, "127.0.0.1:0", dir, "-p", "Sleep.timeout=300ms")
	reg := "file://" + dir

	r := call(t, nil, "--registry", reg, "--timeout", "2s", "demo.Echo", "Sleep", "500")
	expectOK(t, r, "500")

	// a URL key: the provider's Sleep.timeout still wins, and the error
	// names both ways to choose one's own
	r = call(t, nil, "--registry", reg, "-p", "timeout=2s", "demo.Echo", "Sleep", "500")
	failsWith(t, r, "SERVER_TIMEOUT", "the provider's Sleep.timeout", "call --timeout")
	if r.elapsed > 1500*time.Millisecond {
		t.Errorf("-p timeout=2s: took %v; want about 300 ms (the provider's Sleep.timeout)", r.elapsed)
	}

	// the command line's own method-level key decides the attempt;
	// --timeout still bounds the call
	r = call(t, nil, "--registry", reg, "--timeout", "2s", "-p", "methods.Sleep.timeout=400", "demo.Echo", "Sleep", "1000")
	failsWith(t, r, "SERVER_TIMEOUT")
	if !regexp.MustCompile(`timed out after 4\d\dms`).MatchString(r.stderr) {
		t.Errorf("--timeout 2s -p methods.Sleep.timeout=400: %q; want a 400 ms attempt", r.stderr)
	}

	// --timeout still fails a slower call, after its own time
	r = call(t, nil, "--registry", reg, "--timeout", "700ms", "demo.Echo", "Sleep", "1500")
	failsWith(t, r, "SERVER_TIMEOUT")
	if strings.Contains(r.stderr, "the provider's Sleep.timeout") || r.elapsed < 600*time.Millisecond {
		t.Errorf("--timeout 700ms, Sleep 1500: %v, %q; want a timeout of 700 ms that names no provider key", r.elapsed, r.stderr)
	}

	b := runCommand(t, 60*time.Second, nil, "bench", "--registry", reg, "--timeout", "2s", "--method", "Sleep", "--args", "500",
		"-n", "2", "-c", "1", "--warmup", "0", "demo.Echo")
	if b.code != 0 || !strings.Contains(b.stdout, "errors      none") || !strings.Contains(b.stdout, "2s per call (--timeout)") {
		t.Errorf("bench --timeout 2s Sleep 500: exit %d\nstdout %s\nstderr %s\nwant no errors", b.code, b.stdout, b.stderr)
	}

	x := runCommand(t, 20*time.Second, noAirnodeEnv, "list", "--registry", reg, "--explain", "demo.Echo?methods=Sleep&timeout=2s")
	if x.code != 0 || !regexp.MustCompile(`(?m)^timeout +method Sleep +300ms.*provider \(Sleep\.timeout\)\n +method Sleep +\(a call's own timeout beats it: call --timeout D`).MatchString(x.stdout) {
		t.Errorf("list --explain: exit %d\n%s%s\nwant the provider's Sleep.timeout row with a note that --timeout beats it", x.code, x.stdout, x.stderr)
	}
}

// call --help and bench --help say what --timeout is against the URL
// levels (tester90 #1).
func TestBY_TimeoutFlagHelpSaysItBeatsURLLevels(t *testing.T) {
	t.Parallel()
	for _, sub := range []string{"call", "bench"} {
		h := runCommand(t, 20*time.Second, noAirnodeEnv, sub, "--help")
		text := strings.Join(strings.Fields(h.stdout+h.stderr), " ")
		if !strings.Contains(text, "it beats every URL level, a provider's methods.M.timeout or M.timeout too") {
			t.Errorf("%s --help does not say --timeout beats the provider's method key:\n%s", sub, h.stdout)
		}
	}
	h := runCommand(t, 20*time.Second, noAirnodeEnv, "call", "--help")
	if text := strings.Join(strings.Fields(h.stdout), " "); !strings.Contains(text, "the provider's Sleep.timeout beats -p timeout=2s") {
		t.Errorf("call --help does not give the URL keys' order:\n%s", h.stdout)
	}
}
