package cli

import (
	"strings"
	"testing"
	"time"
)

// nu45 finding 2: the kernel takes a Go caller's "timeout" attachment as
// that call's timeout, but call and bench set a call's timeout with
// --timeout (or -p timeout=): -a timeout=D is refused naming --timeout and
// the value, before anything is dialled, and the help says so.
func TestCodec2_TimeoutAttachmentNamesTimeoutFlag(t *testing.T) {
	t.Parallel()
	want := `-a "timeout=3000": the call's timeout is set with --timeout 3000, not -a (--timeout sends it as the kernel's "timeout" attachment`
	r := call(t, noAirnodeEnv, "airnode://127.0.0.1:1/demo.Echo", "Info", "-a", "timeout=3000")
	expectUsage(t, r, "airnode: call: ", want)
	r = call(t, noAirnodeEnv, "airnode://127.0.0.1:1/demo.Echo", "Info", "-a", "Timeout=3000")
	expectUsage(t, r, "airnode: call: ", `-a "Timeout=3000": the call's timeout is set with --timeout 3000`)
	r = runCommand(t, 20*time.Second, noAirnodeEnv, "bench", "airnode://127.0.0.1:1/demo.Echo", "-a", "timeout=3000")
	if r.code != exitUsage || !strings.Contains(r.stderr, "airnode: bench: "+want) {
		t.Errorf("bench -a timeout=3000: exit %d, stderr %q; want %d and %q", r.code, r.stderr, exitUsage, want)
	}
	// remote and token stay reserved, as before
	expectUsage(t, call(t, noAirnodeEnv, "airnode://127.0.0.1:1/demo.Echo", "Info", "-a", "remote=x"),
		"airnode: call: ", `attachment "remote" is reserved by the kernel`)
	h := runCommand(t, 20*time.Second, noAirnodeEnv, "call", "--help")
	if !strings.Contains(h.stdout+h.stderr, "the kernel's keys remote and token are refused, and timeout: use --timeout") {
		t.Errorf("call --help does not say -a timeout is refused for --timeout:\n%s%s", h.stdout, h.stderr)
	}
}
