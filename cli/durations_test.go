package cli

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/airnode/airnode/kernel/config"
)

// durationFlags returns every duration flag of the airnode command tree
// as "command path" (without "airnode") and flag name.
func durationFlags(t *testing.T) [][2]string {
	t.Helper()
	var out [][2]string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.TrimPrefix(c.CommandPath(), "airnode")
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Value.Type() == "duration" {
				out = append(out, [2]string{strings.TrimSpace(path), f.Name})
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCommand(newApp(io.Discard, io.Discard)))
	if len(out) < 4 { // serve's two, bench --duration, stats --timeout, plugin check --start-timeout
		t.Fatalf("found only the duration flags %v", out)
	}
	return out
}

// Every duration flag of every command refuses a value that is no
// duration with one line naming the command, the flag and the forms
// allowed (was pflag's `invalid argument "5x" for "--shutdown-wait" flag:
// time: unknown unit ...`), bench --json included.
func TestDurationFlagsNameTheFlagAndTheForms(t *testing.T) {
	for _, df := range durationFlags(t) {
		args := append(strings.Fields(df[0]), "--"+df[1], "5x")
		r := runCommand(t, 20*time.Second, nil, args[0], args[1:]...)
		want := fmt.Sprintf("airnode: %s: --%s \"5x\": want a duration such as 500ms, 2s or 1m30s, or a bare number of milliseconds (500)\n", df[0], df[1])
		if r.code != exitUsage || r.stderr != want {
			t.Errorf("airnode %s: exit %d, stderr %q; want exit 2 (a usage error) and %q", strings.Join(args, " "), r.code, r.stderr, want)
		}
	}
	r := runCommand(t, 20*time.Second, nil, "bench", "airnode://127.0.0.1:1/demo.Echo", "--json", "--duration=x")
	if r.code != exitUsage || !strings.Contains(r.stdout, `"error": "bench: --duration \"x\": want a duration such as 500ms`) {
		t.Errorf("bench --json --duration=x: exit %d, stdout %q", r.code, r.stdout)
	}
}

// --shutdown-wait 5000, AIRNODE_SHUTDOWN_WAIT=5000 and bench --duration 300
// are milliseconds, as the
// URL key timeout=500 is (they were refused: "missing unit in duration").
// A wait longer than the timeout is refused by config's bound, which
// prints both as read.
func TestDurationFlagsAndEnvironmentTakeBareMilliseconds(t *testing.T) {
	r := runCommand(t, 20*time.Second, nil, "serve", "--listen", "127.0.0.1:0", "--registry", "memory://",
		"--shutdown-wait", "5000", "--shutdown-timeout", "1000") // a second or more: no bare-number warning
	expectUsage(t, r, "airnode: serve: config: flag --shutdown-wait: 5s must be between 0 and shutdown.timeout (1s, --shutdown-timeout)") // a flag out of its bounds (fix-p)
	r = runCommand(t, 20*time.Second, []string{"AIRNODE_SHUTDOWN_WAIT=5000", "AIRNODE_SHUTDOWN_TIMEOUT=1000"}, "serve",
		"--listen", "127.0.0.1:0", "--registry", "memory://") // a second or more: no bare-number warning
	expectFail(t, r, "airnode: serve: config: environment AIRNODE_SHUTDOWN_WAIT: 5s must be between 0 and shutdown.timeout (1s, AIRNODE_SHUTDOWN_TIMEOUT)")
	r = runCommand(t, 20*time.Second, []string{"AIRNODE_SHUTDOWN_WAIT=5x"}, "serve", "--listen", "127.0.0.1:0", "--registry", "memory://")
	expectFail(t, r, `airnode: serve: config: environment AIRNODE_SHUTDOWN_WAIT "5x": want a duration such as 500ms, 2s or 1m30s, or a bare number of milliseconds (500)`)

	// a node that runs with them: the shutdown line shows what it read
	dir := t.TempDir()
	p := startServe(t, "127.0.0.1:0", "file://"+dir, []string{"XDG_RUNTIME_DIR=" + dir, "AIRNODE_SHUTDOWN_TIMEOUT=3000"}, "",
		"--shutdown-wait", "100")
	// bench --duration 300 runs 300 ms (300 s would outlast benchRun's 60 s)
	if r := benchJSON(t, nil, p.url("demo.Echo"), "--duration", "300", "--warmup", "10"); r.Calls == 0 || r.ElapsedSec > 30 {
		t.Fatalf("bench --duration 300: %d calls in %.1f s", r.Calls, r.ElapsedSec)
	}
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	if !regexp.MustCompile(`shutting down" wait=100ms timeout=3s`).MatchString(p.logText()) {
		t.Fatalf("serve log lacks wait=100ms timeout=3s:\n%s", p.logText())
	}
}

// Each duration variable config.Load reads (named in its flag's usage as
// "env AIRNODE_...") is in durationEnv, so it takes bare milliseconds too.
func TestDurationEnvCoversConfigFlags(t *testing.T) {
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	config.AddFlags(fs)
	env := regexp.MustCompile(`env (AIRNODE_[A-Z_]+)`)
	n := 0
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Value.Type() != "duration" {
			return
		}
		m := env.FindStringSubmatch(f.Usage)
		if m == nil || durationEnv[m[1]] == "" {
			t.Errorf("--%s (%q): its variable is not in durationEnv %v", f.Name, f.Usage, durationEnv)
		}
		n++
	})
	if n == 0 {
		t.Fatal("config.AddFlags defines no duration flag")
	}
}

// tester84 #1: AIRNODE_SHUTDOWN_TIMEOUT=5 is 5 ms, as --shutdown-timeout 5
// is, and nothing said so until the signal came: a container's =30
// (meaning its grace period's seconds) abandoned every call in flight. A
// bare number under a second is warned of at start, naming the variable.
func TestBareMillisecondsInTheEnvironmentAreWarnedOf(t *testing.T) {
	r := runCommand(t, 20*time.Second, []string{"AIRNODE_SHUTDOWN_TIMEOUT=30", "AIRNODE_SHUTDOWN_WAIT=0"}, "list")
	want := "warning: AIRNODE_SHUTDOWN_TIMEOUT=30 is 30ms (a bare number is milliseconds, as in Dubbo); write 30s for seconds"
	if !strings.Contains(r.stderr, want) {
		t.Errorf("list with AIRNODE_SHUTDOWN_TIMEOUT=30: stderr %q, want %q", r.stderr, want)
	}
	if strings.Contains(r.stderr, "AIRNODE_SHUTDOWN_WAIT=0 is") {
		t.Errorf("AIRNODE_SHUTDOWN_WAIT=0 (no wait) warned of: %q", r.stderr)
	}
	r = runCommand(t, 20*time.Second, []string{"AIRNODE_SHUTDOWN_TIMEOUT=3000", "AIRNODE_SHUTDOWN_WAIT=2s"}, "list")
	if strings.Contains(r.stderr, "a bare number is milliseconds") {
		t.Errorf("AIRNODE_SHUTDOWN_TIMEOUT=3000 warned of: %q", r.stderr)
	}
}
