package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/bench"
)

// exitsAtStart writes a plugin "binary" that exits 1 before its
// handshake, saying why on stderr.
func exitsAtStart(t *testing.T) string {
	t.Helper()
	return writeScript(t, t.TempDir(), "exits", "echo 'auth: key file missing' >&2\nexit 1\n")
}

// tester nu77 #5: a consumer filter plugin that cannot start is skipped
// by call and bench with a warning (a provider fails closed); with
// required: true they exit 1 instead, naming the plugin, the key
// plugins[0].required and why it did not start, and send no call.
// Commands that build no chain (registry ls, list) still go on, warning
// or showing it failed.
func TestNu77RequiredFilterPluginThatCannotStartFailsCallAndBench(t *testing.T) {
	bad := exitsAtStart(t)
	p := serve(t, "127.0.0.1:0", t.TempDir())

	t.Run("NotRequired", func(t *testing.T) {
		cfg := writeConfig(t, "plugins:\n  - {name: acme.auth, point: filter, command: "+bad+"}\n")
		r := call(t, nil, "--config", cfg, p.url("demo.Echo"), "Echo", `"x"`)
		if r.code != 0 || strings.TrimSpace(r.stdout) != `"x"` ||
			!strings.Contains(r.stderr, "filter plugin failed to start; this command goes on without it") ||
			!strings.Contains(r.stderr, "plugin=acme.auth") {
			t.Fatalf("call: exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("Required", func(t *testing.T) {
		cfg := writeConfig(t, "plugins:\n  - {name: acme.auth, point: filter, command: "+bad+", required: true}\n")
		want := []string{
			`config: ` + cfg + `: key "plugins[0].required": filter plugin "acme.auth" is required but failed to start, so this command does not run without it`,
			`exited with status 1 before the handshake; its last stderr line: "auth: key file missing"`,
		}
		for _, args := range [][]string{
			{"call", "--config", cfg, p.url("demo.Echo"), "Echo", `"x"`},
			{"bench", "--config", cfg, p.url("demo.Echo"), "-n", "5"},
		} {
			r := runCommand(t, 20*time.Second, nil, args[0], args[1:]...)
			if r.code != 1 || r.stdout != "" || !containsAll(r.stderr, want) || strings.Contains(r.stderr, "goes on without it") {
				t.Errorf("%s: exit %d, stdout %q, stderr:\n%s\nwant exit 1 and %q", args[0], r.code, r.stdout, r.stderr, want)
			}
		}
		// no chain: the commands of before
		r := runCommand(t, 20*time.Second, nil, "registry", "--config", cfg, "ls", "--registry", "memory://")
		if r.code != 0 || !strings.Contains(r.stderr, "filter plugin failed to start") {
			t.Errorf("registry ls: exit %d, stderr:\n%s", r.code, r.stderr)
		}
		r = runCommand(t, 20*time.Second, nil, "list", "--config", cfg)
		if r.code != 0 || !strings.Contains(r.stdout, "failed: ") {
			t.Errorf("list: exit %d, stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
	})
}

// tester nu77 #5: required is refused on a point other than filter,
// naming the key and what is allowed, by every command that reads the
// file.
func TestNu77RequiredOnABalancerIsAConfigError(t *testing.T) {
	cfg := writeConfig(t, "plugins:\n  - {name: acme.p2c, point: loadbalance, command: /bin/false, required: true}\n")
	want := `config: ` + cfg + `: key "plugins[0].required": true is allowed only with point: filter`
	for _, args := range [][]string{
		{"call", "--config", cfg, "airnode://127.0.0.1:1/demo.Echo", "Echo", `"x"`},
		{"serve", "--config", cfg, "--listen", "127.0.0.1:0", "--registry", "memory://"},
	} {
		r := runCommand(t, 20*time.Second, nil, args[0], args[1:]...)
		if r.code != 1 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "not with point: loadbalance") {
			t.Errorf("%s: exit %d, stderr:\n%s\nwant exit 1 and %q", args[0], r.code, r.stderr, want)
		}
	}
}

// tester nu77 #5: while bench runs, its required filter plugin is killed
// and its restarts fail (the binary replaced by one that exits at
// start): the calls of those seconds fail CLIENT_ERROR saying the filter
// is required and the call was not sent; once the good binary is back
// and the plugin restarted, calls succeed again.
func TestNu77RequiredFilterPluginDownFailsBenchCallsUntilBack(t *testing.T) {
	dir := t.TempDir()
	good := buildPlugin(t, "github.com/airnode/airnode/cli/testdata/filterplugin")
	bin := filepath.Join(dir, "auth")
	copyExecutable(t, good, bin)
	cfg := writeConfig(t, "plugins:\n  - {name: acme.auth, point: filter, command: "+bin+", required: true}\n")
	p := serve(t, "127.0.0.1:0", t.TempDir())

	cmd := exec.Command(binary, "bench", "--config", cfg, "--log-level", "info", p.url("demo.Echo"),
		"--duration", "7s", "-c", "2", "--warmup", "0", "--json")
	cmd.Env = append(hostEnviron(), "XDG_RUNTIME_DIR="+t.TempDir())
	var out bytes.Buffer
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	pids := make(chan int, 4)
	var log bytes.Buffer
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if m := pluginPID.FindStringSubmatch(sc.Text()); m != nil {
				n, _ := strconv.Atoi(m[2])
				pids <- n
			}
		}
	}()
	var pid int
	select {
	case pid = <-pids:
	case <-time.After(15 * time.Second):
		t.Fatal("bench did not start its filter plugin")
	}
	time.Sleep(1500 * time.Millisecond) // a second of calls through it
	copyExecutable(t, exitsAtStart(t), bin)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // down, its restarts failing
	copyExecutable(t, good, bin)
	werr := cmd.Wait()
	<-logDone
	if werr != nil {
		t.Fatalf("bench: %v\n%s", werr, log.String())
	}
	var r bench.Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("bench --json printed %q: %v", out.String(), err)
	}
	t.Logf("errors %v, first error %q", r.Errors, r.FirstError)
	for _, s := range r.Timeline {
		t.Logf("second %d: calls %d errors %v", s.Second, s.Calls, s.Errors)
	}
	if len(r.Errors) != 1 || r.Errors["CLIENT_ERROR"] == 0 ||
		!strings.HasPrefix(r.FirstError, `CLIENT_ERROR: filter "acme.auth" is required (plugins.yaml: required: true), so the call was not sent without it: `) {
		t.Fatalf("errors %v, first error %q; want CLIENT_ERROR only, naming the required filter\n%s", r.Errors, r.FirstError, log.String())
	}
	if !strings.Contains(log.String(), "plugin restart failed; trying again") {
		t.Fatalf("no failed restart while the plugin was down:\n%s", log.String())
	}
	tl := r.Timeline
	if len(tl) < 3 {
		t.Fatalf("timeline %+v", tl)
	}
	if s := tl[0]; s.Calls == 0 || len(s.Errors) != 0 {
		t.Errorf("second 0 (plugin up): calls %d, errors %v; want calls, no error", s.Calls, s.Errors)
	}
	if s := tl[len(tl)-2]; s.Calls == 0 || len(s.Errors) != 0 {
		t.Errorf("second %d (plugin back): calls %d, errors %v; want calls, no error", s.Second, s.Calls, s.Errors)
	}
}
