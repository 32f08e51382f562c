package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The shutdown wait and timeout have one precedence whatever spells them
// (README "Configuration": defaults < file < environment < flags, -p
// shutdown.wait being the flag --shutdown-wait): the wait is checked
// against the timeout in effect, from any source, and a refusal names
// the -p value, the other value and where it came from.
func TestHOps3_ShutdownSourcesOnePrecedence(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "plugins.yaml")
	if err := os.WriteFile(file, []byte("shutdown: {timeout: 2s}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env, args, want []string
	}{
		{[]string{"AIRNODE_SHUTDOWN_TIMEOUT=2s"}, []string{"-p", "shutdown.wait=3s"},
			[]string{`invalid value "3s" for URL key "shutdown.wait"`, "from 0 to shutdown.timeout (2s, AIRNODE_SHUTDOWN_TIMEOUT)"}},
		{[]string{"AIRNODE_SHUTDOWN_WAIT=5s"}, []string{"-p", "shutdown.timeout=4s"},
			[]string{`invalid value "4s" for URL key "shutdown.timeout"`, "at least shutdown.wait (5s, AIRNODE_SHUTDOWN_WAIT)"}},
		{nil, []string{"--config", file, "-p", "shutdown.wait=3s"},
			[]string{`invalid value "3s" for URL key "shutdown.wait"`, "from 0 to shutdown.timeout (2s, shutdown.timeout in " + file + ")"}},
		{nil, []string{"-p", "shutdown.wait=3s", "--shutdown-timeout", "2s"},
			[]string{`invalid value "3s" for URL key "shutdown.wait"`, "(2s, --shutdown-timeout)"}},
	} {
		dir := t.TempDir()
		full := append([]string{"--listen", "127.0.0.1:0", "--registry", "file://" + dir}, tc.args...)
		r := runCommand(t, 10*time.Second, append([]string{"XDG_RUNTIME_DIR=" + dir}, tc.env...), "serve", full...)
		// the -p value refused, named as typed: a usage error (fix-bs)
		prefix := "airnode: serve: -p " + tc.args[slices.Index(tc.args, "-p")+1] + ": "
		if r.code != exitUsage || strings.Contains(r.stderr, "msg=listening") || !strings.HasPrefix(r.stderr, prefix) {
			t.Fatalf("serve %v %v: exit %d, stderr %q; want exit 2 before listening, stderr starting %q", tc.env, tc.args, r.code, r.stderr, prefix)
		}
		for _, w := range tc.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("serve %v %v: stderr %q; want it to say %q", tc.env, tc.args, r.stderr, w)
			}
		}
	}

	// A wait above the default 10 s timeout is fine with a longer one
	// from -p, whichever source gave the wait (it was refused before -p
	// was looked at); the shutting-down line says both and their sources.
	for _, tc := range []struct {
		env, args []string
		line      string
	}{
		{nil, []string{"--shutdown-wait", "12s", "-p", "shutdown.timeout=20s"},
			`shutting down" wait=12s timeout=20s wait_from=--shutdown-wait timeout_from="-p shutdown.timeout"`},
		{[]string{"AIRNODE_SHUTDOWN_WAIT=12s"}, []string{"-p", "shutdown.timeout=20s"},
			`shutting down" wait=12s timeout=20s wait_from=AIRNODE_SHUTDOWN_WAIT timeout_from="-p shutdown.timeout"`},
	} {
		dir := t.TempDir()
		p := startServe(t, "127.0.0.1:0", "file://"+dir, append([]string{"XDG_RUNTIME_DIR=" + dir}, tc.env...), "", tc.args...)
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the shutting-down line", func() bool { return strings.Contains(p.logText(), "shutting down") })
		if !strings.Contains(p.logText(), tc.line) {
			t.Errorf("serve %v %v: want %s in:\n%s", tc.env, tc.args, tc.line, p.logText())
		}
	}

	// Higher sources win, the flag's -p spelling too: -p over the
	// environment, the environment and flags over the file, its
	// shutdown: and its URL keys alike. Measured: SIGTERM to exit.
	fileWait := filepath.Join(t.TempDir(), "plugins.yaml")
	if err := os.WriteFile(fileWait, []byte("shutdown: {wait: 4s}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// the file's URL key (protocol:) too: the kernel read the largest
	// export key, so it outlasted the flag
	fileKey := filepath.Join(t.TempDir(), "plugins.yaml")
	if err := os.WriteFile(fileKey, []byte("protocol: {shutdown.wait: 4s}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env, args []string
		line      string
	}{
		{[]string{"AIRNODE_SHUTDOWN_WAIT=4s"}, []string{"-p", "shutdown.wait=500ms"}, `wait=500ms timeout=10s wait_from="-p shutdown.wait"`},
		{[]string{"AIRNODE_SHUTDOWN_WAIT=500ms"}, []string{"--config", fileWait}, `wait=500ms timeout=10s wait_from=AIRNODE_SHUTDOWN_WAIT`},
		{nil, []string{"--config", fileKey, "--shutdown-wait", "500ms"}, `wait=500ms timeout=10s wait_from=--shutdown-wait`},
		{[]string{"AIRNODE_SHUTDOWN_WAIT=500ms"}, []string{"--config", fileKey}, `wait=500ms timeout=10s wait_from=AIRNODE_SHUTDOWN_WAIT`},
	} {
		dir := t.TempDir()
		p := startServe(t, "127.0.0.1:0", "file://"+dir, append([]string{"XDG_RUNTIME_DIR=" + dir}, tc.env...), "", tc.args...)
		begun := time.Now()
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := p.wait(t, 10*time.Second); code != 0 {
			t.Errorf("serve %v %v: exit %d", tc.env, tc.args, code)
		}
		if took := time.Since(begun); took < 450*time.Millisecond || took > 3*time.Second {
			t.Errorf("serve %v %v: SIGTERM to exit %v; want about the 500ms wait (4s is the lower source's)", tc.env, tc.args, took.Round(time.Millisecond))
		}
		if !strings.Contains(p.logText(), tc.line) {
			t.Errorf("serve %v %v: want %s in:\n%s", tc.env, tc.args, tc.line, p.logText())
		}
	}
}

// With a registry no other process reads, the default shutdown wait is
// skipped (no consumer learns of the shutdown from it) and the log says
// so; a wait given explicitly, from any source, is kept for health
// probes (tester60: /ready must answer 503 before the listener closes in
// a deployment without a registry), and the log says that.
func TestHOps3_MemoryRegistrySkipsOnlyTheDefaultWait(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env, args []string
		said      string // in the start warning
		wait      string // the shutting-down line's wait and wait_from
	}{
		{nil, []string{"--shutdown-wait", "1s"}, "the 1s shutdown wait of --shutdown-wait is kept for health probes", `wait=1s timeout=10s wait_from=--shutdown-wait`},
		{[]string{"AIRNODE_SHUTDOWN_WAIT=1s"}, nil, "the 1s shutdown wait of AIRNODE_SHUTDOWN_WAIT is kept for health probes", `wait=1s timeout=10s wait_from=AIRNODE_SHUTDOWN_WAIT`},
		{nil, []string{"-p", "shutdown.wait=1s"}, "the 1s shutdown wait of -p shutdown.wait is kept for health probes", `wait=1s timeout=10s wait_from="-p shutdown.wait"`},
		{nil, nil, "no shutdown wait, since no consumer learns of the shutdown from it (the 2s of the default is skipped;", `wait=0s timeout=10s wait_from="none: the 2s of the default is skipped, this registry publishes to no other process"`},
	} {
		p := startServe(t, "127.0.0.1:0", "memory://", append(slicesClone(noAirnodeEnv), tc.env...), t.TempDir(), tc.args...)
		if log := p.logText(); !strings.Contains(log, tc.said) {
			t.Errorf("%v %v: the start warning does not say %q:\n%s", tc.env, tc.args, tc.said, log)
		}
		begun := time.Now()
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := p.wait(t, 10*time.Second); code != 0 {
			t.Errorf("%v %v: exit %d", tc.env, tc.args, code)
		}
		took := time.Since(begun)
		kept := strings.Contains(tc.wait, "wait=1s")
		if kept && (took < 900*time.Millisecond || took > 5*time.Second) || !kept && took > 1500*time.Millisecond {
			t.Errorf("%v %v: stopped %v after SIGTERM; want about 1s when the wait is kept, at once when skipped", tc.env, tc.args, took.Round(time.Millisecond))
		}
		if !strings.Contains(p.logText(), `shutting down" `+tc.wait) {
			t.Errorf("%v %v: the shutting-down line does not say %s:\n%s", tc.env, tc.args, tc.wait, p.logText())
		}
	}
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// A heartbeat verdict on a consumer (pings to a stopped provider failed)
// is one record, at Warn: the kernel's "channel closed; reconnecting", with
// the reason, failed_calls and the provider; the channel logs none of its
// own (tester80: it was the channel's Warn, and a kernel Debug line).
func TestHOps3_HeartbeatVerdictIsOneWarnLine(t *testing.T) {
	t.Parallel()
	p := startServe(t, "127.0.0.1:0", "memory://", noAirnodeEnv, t.TempDir())
	t.Cleanup(func() { _ = p.cmd.Process.Signal(syscall.SIGCONT) })
	done := make(chan result, 1)
	go func() {
		done <- runCommand(t, 30*time.Second, nil, "bench", "--duration", "5s", "-c", "1", "--timeout", "10s",
			"-p", "heartbeat.interval=1s", "-p", "heartbeat.retries=1", "-p", "heartbeat.ping.timeout=300ms", p.url("demo.Echo"))
	}()
	time.Sleep(time.Second)
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	r := <-done
	verdict := regexp.MustCompile(`level=WARN msg="channel closed; reconnecting" component=kernel provider=\S+ reason="heartbeat idle: 1 pings to \S+ failed in a row.* failed_calls=1`)
	if !verdict.MatchString(r.stderr) {
		t.Fatalf("bench stderr has no Warn line for the heartbeat close with its reason and failed_calls=1:\n%s", r.stderr)
	}
	n := 0
	for l := range strings.SplitSeq(r.stderr, "\n") {
		if strings.Contains(l, `msg="channel closed`) && strings.Contains(l, "heartbeat idle: 1 pings to") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the heartbeat close is %d records, want 1:\n%s", n, r.stderr)
	}
}

// A registry listing providers of the interface in another group or
// version only: call fails at once naming them (it waited the 2 s meant
// for a provider still registering), and so does bench.
func TestHOps3_CallFailsAtOnceWhenAllFilteredOut(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	serve(t, "127.0.0.1:0", dir, "-p", "group=g1", "-p", "version=1.0")
	env := []string{"XDG_RUNTIME_DIR=" + dir, "AIRNODE_REGISTRY=file://" + dir}
	for _, sub := range [][]string{
		{"call", "demo.Echo", "Echo", `"x"`},
		{"call", "-p", "version=2.0", "-p", "group=g1", "demo.Echo", "Echo", `"x"`},
		{"bench", "--duration", "1s", "demo.Echo"},
	} {
		r := runCommand(t, 20*time.Second, env, sub[0], sub[1:]...)
		if r.code == 0 || !strings.Contains(r.stderr, "SERVICE_NOT_FOUND") || !strings.Contains(r.stderr, "left out: ") ||
			!strings.Contains(r.stderr, "is in group g1, version 1.0") {
			t.Errorf("%v: exit %d, stderr %q; want SERVICE_NOT_FOUND naming what is registered (group g1, version 1.0)", sub, r.code, r.stderr)
		}
		if r.elapsed > 1500*time.Millisecond {
			t.Errorf("%v: failed after %v; want at once (2 s is for a registry that lists nothing yet)", sub, r.elapsed.Round(time.Millisecond))
		}
	}
	// the matching reference is answered, and nothing listed still waits
	expectOK(t, runCommand(t, 20*time.Second, env, "call", "-p", "group=g1", "-p", "version=1.0", "demo.Echo", "Echo", `"x"`), `"x"`)
	r := runCommand(t, 20*time.Second, env, "call", "demo.Nothing", "Echo", `"x"`)
	if r.code == 0 || r.elapsed < 1900*time.Millisecond {
		t.Errorf("nothing listed: exit %d after %v; want a failure after the 2 s wait", r.code, r.elapsed.Round(time.Millisecond))
	}
}

// list --explain shows a duration or size as its type reads, as list
// kernel shows defaults: bare milliseconds with ms, bytes in KiB/MiB,
// the node's shutdown times without Go's "1m0s".
func TestHOps3_ListExplainReadsTypedValues(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "plugins.yaml")
	if err := os.WriteFile(file, []byte("shutdown: {timeout: 60s, wait: 1500ms}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCommand(t, 20*time.Second, noAirnodeEnv, "list", "--config", file, "--explain",
		"airnode://127.0.0.1:1/demo.Echo?timeout=200&payload=1048576&unsent.limit=65536&loadbalance=p2c&p2c.decay=500&connect.timeout=2s")
	for _, row := range []string{
		`timeout +service +200ms \(written 200\) +SERVICE_URL query \(timeout\)`,
		`payload +service +1MiB \(written 1048576\) +SERVICE_URL query \(payload\)`,
		`unsent.limit +service +64KiB \(written 65536\)`,
		`p2c.decay +service +500ms \(written 500\)`,
		`connect.timeout +service +2s +SERVICE_URL query \(connect.timeout\)`,
		`shutdown.timeout +service +1m +node`,
		`shutdown.wait +service +1500ms +node`,
		`reconnect.backoff +service +100ms +default`,
		`health.service +service +true +default`,
	} {
		if !regexp.MustCompile(`(?m)^` + row).MatchString(r.stdout) {
			t.Errorf("list --explain: no row %q in:\n%s", row, r.stdout)
		}
	}
}
