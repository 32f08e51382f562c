package cli

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// TestT12Ops3_BenchSaysHowManyConnectionsAreUp (tester12 finding 3): a
// run whose provider accepted only some of the connections asked for
// says so instead of "40 connection(s)"; a run that got them all, or
// whose reference has no remote provider to count, keeps the plain text.
func TestT12Ops3_BenchSaysHowManyConnectionsAreUp(t *testing.T) {
	for _, tc := range []struct {
		up, asked int
		want      string
	}{
		{40, 40, "40 connection(s) per provider"},
		{0, 0, "40 connection(s) per provider"},
		{29, 40, "only 29 of 40 connection(s) up (the others got no answer to their first ping, or were closed at once: is the provider out of file descriptors, or at its connection limit, URL key accepts? see its log)"},
	} {
		got := connectionsText(benchOutcome{ConnectionsUp: tc.up, ConnectionsAsked: tc.asked}, 40)
		if got != tc.want {
			t.Errorf("connectionsText(%d of %d) = %q, want %q", tc.up, tc.asked, got, tc.want)
		}
		if tc.up < tc.asked && !strings.HasPrefix(got, "only ") {
			t.Errorf("%q does not lead with the shortfall", got)
		}
	}
}

// TestT12Ops3_ServeOutOfFDs (tester12 finding 3, end to end): an
// `airnode serve` whose RLIMIT_NOFILE is lowered to 8 above what it has
// open, benched with 20 connections: bench says only some were up, the
// provider logs the failed accept at Warn ("too many open files") and
// counts it in /metrics, and once bench has gone it accepts again and
// answers a call.
func TestT12Ops3_ServeOutOfFDs(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--metrics", "127.0.0.1:0")
	m := regexp.MustCompile(`airnode serve: metrics" addr=(\S+)`).FindStringSubmatch(p.logText())
	if m == nil {
		t.Fatal("no metrics address in the log")
	}
	// Healthy, a short run: every connection is counted once up.
	if out := benchRun(t, nil, p.url("demo.Echo"), "-n", "20", "-c", "2", "--connections", "64"); !strings.Contains(out, ", 64 connection(s) per provider, ") {
		t.Errorf("bench of a healthy provider did not report its 64 connections:\n%s", out)
	}
	pid := p.cmd.Process.Pid
	openFDs := func() int { // the provider's open descriptors
		fds, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(fds)
	}
	n := openFDs()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); { // the 64 connections closing
		time.Sleep(200 * time.Millisecond)
		m := openFDs()
		if m == n {
			break
		}
		n = m
	}
	lim := syscall.Rlimit{Cur: uint64(n + 8), Max: uint64(n + 8)}
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(pid), uintptr(syscall.RLIMIT_NOFILE),
		uintptr(unsafe.Pointer(&lim)), 0, 0, 0); errno != 0 {
		t.Fatalf("prlimit %d: %v", pid, errno)
	}
	out := benchRun(t, nil, p.url("demo.Echo"), "--duration", "2s", "-c", "20", "--connections", "20")
	t.Logf("bench: %s", strings.SplitN(out, "\n", 2)[0])
	if !strings.Contains(out, "connection(s) up") || !strings.Contains(out, "only ") {
		t.Errorf("bench did not say that only some connections were up:\n%s", out)
	}
	log := p.logText()
	if !strings.Contains(log, `level=WARN msg="accept failed; retrying`) || !strings.Contains(log, "component=transport transport=smux") || !strings.Contains(log, "too many open files") {
		t.Fatalf("provider log lacks the Warn for the failed accept:\n%s", log)
	}
	if body := getMetrics(t, m[1]); !regexp.MustCompile(`(?m)^airnode_accept_errors_total [1-9]`).MatchString(body) {
		t.Errorf("/metrics: airnode_accept_errors_total not above 0")
	}
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(p.logText(), "accepting connections again") {
		if time.Now().After(deadline) {
			t.Fatalf("provider did not accept again after bench ended:\n%s", p.logText())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if r := runCommand(t, 20*time.Second, nil, "call", p.url("demo.Echo"), "Echo", `"after"`); r.code != 0 {
		t.Fatalf("call after bench: exit %d: %s", r.code, r.stderr)
	}
}
