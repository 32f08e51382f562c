package cli

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/bench"
	"github.com/airnode/airnode/internal/testbin"
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
//
// The seconds judged are placed by the clock, not by their index: every
// second of the timeline that ended before the kill has calls and no
// error, and so has every one that began after the restarted plugin
// said it was running. Under load (a full run at load 10-21) second 0
// could reach past the kill when bench's measured phase began late, and
// the restart that catches the good binary back came as late as the
// backoff's doubling made it (100 ms, 200 ms, ... 1.6 s: the attempt
// 1.5 s after the kill raced the copy, the next came 3.1 s after it).
// The good binary is put back as soon as a restart has failed three
// times, so the one after (in 800 ms) finds it. A call waits for the
// plugin's restart within its timeout (fix-cr), so bench's --timeout
// 500ms is shorter than the plugin's downtime (1.5 s of backoff and
// more): the calls that waited it in vain fail. (200 ms and two failed
// restarts failed once under -race beside other packages' tests.)
func TestNu77RequiredFilterPluginDownFailsBenchCallsUntilBack(t *testing.T) {
	dir := t.TempDir()
	good := buildPlugin(t, "github.com/airnode/airnode/cli/testdata/filterplugin")
	bin := filepath.Join(dir, "auth")
	testbin.ReplaceFile(t, good, bin)
	cfg := writeConfig(t, "plugins:\n  - {name: acme.auth, point: filter, command: "+bin+", required: true}\n")
	p := serve(t, "127.0.0.1:0", t.TempDir())

	restartFailed := make(chan struct{}, 16)
	pids, wait := startBench(t, func(line string) {
		if strings.Contains(line, "plugin restart failed; trying again") {
			select {
			case restartFailed <- struct{}{}:
			default:
			}
		}
	}, "--config", cfg, "--log-level", "info", p.url("demo.Echo"),
		"--duration", "9s", "-c", "2", "--warmup", "0", "--timeout", "500ms")
	var pid int
	select {
	case pid = <-pids:
	case <-time.After(15 * time.Second):
		t.Fatal("bench did not start its filter plugin")
	}
	time.Sleep(2 * time.Second) // a second or more of calls through it
	testbin.ReplaceFile(t, exitsAtStart(t), bin)
	killed := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // down, its restarts failing
		select {
		case <-restartFailed:
		case <-time.After(15 * time.Second):
			t.Fatalf("%d failed restarts logged in the 15 s after the plugin was killed, want 3", i)
		}
	}
	testbin.ReplaceFile(t, good, bin)
	var back time.Time
	select {
	case <-pids:
		back = time.Now()
	case <-time.After(15 * time.Second):
		t.Fatal("the plugin did not run again within 15 s of its good binary coming back")
	}
	t.Logf("plugin killed, running again %v later", back.Sub(killed).Round(time.Millisecond))
	r, log := wait()
	start, err := time.Parse(bench.StartFormat, r.Start)
	if err != nil {
		t.Fatalf("report start %q: %v", r.Start, err)
	}
	t.Logf("errors %v, first error %q", r.Errors, r.FirstError)
	for _, s := range r.Timeline {
		t.Logf("second %d: calls %d errors %v", s.Second, s.Calls, s.Errors)
	}
	if len(r.Errors) != 1 || r.Errors["CLIENT_ERROR"] == 0 ||
		!strings.HasPrefix(r.FirstError, `CLIENT_ERROR: filter "acme.auth" is required (plugins.yaml: required: true), so the call was not sent without it: `) {
		t.Fatalf("errors %v, first error %q; want CLIENT_ERROR only, naming the required filter\n%s", r.Errors, r.FirstError, log)
	}
	var up, again int
	end := start.Add(time.Duration(r.ElapsedSec * float64(time.Second)))
	for _, s := range r.Timeline {
		from := start.Add(time.Duration(s.Second) * time.Second)
		to := from.Add(time.Second)
		var when string
		switch {
		case !to.After(killed):
			up++
			when = "plugin up"
		case !from.Before(back) && !to.After(end):
			again++
			when = "plugin back"
		default:
			continue
		}
		if s.Calls == 0 || len(s.Errors) != 0 {
			t.Errorf("second %d (%s): calls %d, errors %v; want calls, no error", s.Second, when, s.Calls, s.Errors)
		}
	}
	if up == 0 || again == 0 {
		t.Fatalf("%d whole seconds of the timeline before the kill (%v after its start) and %d after the restart (%v), want one or more of each",
			up, killed.Sub(start).Round(time.Millisecond), again, back.Sub(start).Round(time.Millisecond))
	}
}
