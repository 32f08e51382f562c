package cli

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// nobodyZK is a ZooKeeper address in this file's port range where nothing
// listens: every dial is refused.
const nobodyZK = "zookeeper://127.0.0.1:26598"

// tester nu54 finding 1: serve with a ZooKeeper it cannot reach at start
// exits 1 once connect.timeout has passed (Dubbo's registry check,
// check=true by default), naming the server, the last dial's error and
// check=false, and never says "serving"; with check=false it serves
// (TestServeLoopbackToSharedRegistryWarns).
func TestCfg3_ServeFailsWhenZooKeeperIsUnreachableAtStart(t *testing.T) {
	t.Parallel()
	r := runCommand(t, 30*time.Second, noAirnodeEnv, "serve", "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0",
		"--registry", nobodyZK+"?connect.timeout=1s", "--shutdown-wait", "0")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"airnode: serve: kernel: register demo.Echo in " + nobodyZK, "no session with 127.0.0.1:26598",
		"connection refused", "add check=false to the registry URL to start anyway"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "airnode serve: serving") {
		t.Errorf("serve said serving while registered nowhere:\n%s", r.stderr)
	}
	if r.elapsed < time.Second || r.elapsed > 20*time.Second {
		t.Errorf("serve exited after %v; want about connect.timeout (1s)", r.elapsed)
	}
}

// tester nu54 finding 2: a SIGTERM while serve is still starting (its
// Register waiting for ZooKeeper) is a stop: serve drains what it has,
// says which signal stopped it during startup, and exits 0, as after a
// drain; no "left running" error.
func TestCfg3_SignalDuringStartupIsAStop(t *testing.T) {
	t.Parallel()
	p, _ := launchServe(t, binary, "127.0.0.1:0", nobodyZK+"?connect.timeout=30s", noAirnodeEnv, "", "--shutdown-wait", "0")
	waitFor(t, "serve listening", func() bool { return strings.Contains(p.logText(), "msg=listening") })
	time.Sleep(300 * time.Millisecond) // into the Register's wait for a session
	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code := p.wait(t, 20*time.Second)
	took := time.Since(start)
	out := p.logText()
	if code != 0 {
		t.Fatalf("serve stopped during startup: exit %d, want 0\n%s", code, out)
	}
	if !strings.Contains(out, "SIGTERM received during startup, while exporting demo.Echo: stopping before serving") ||
		!strings.Contains(out, "airnode serve: stopped") {
		t.Errorf("no line naming the signal, or no stop:\n%s", out)
	}
	if strings.Contains(out, "airnode: ") || strings.Contains(out, "airnode serve: serving") {
		t.Errorf("an error line, or serving, after a stop during startup:\n%s", out)
	}
	if took > 15*time.Second {
		t.Errorf("serve took %v to stop after SIGTERM; want well under connect.timeout (30s)", took)
	}
}

// tester nu54 finding 3: a flag value of the wrong form is a usage error,
// exit 2, in every command: -p without "=" (serve, call, bench),
// --log-format and --log-level.
func TestCfg3_FlagValuesOfTheWrongFormExit2(t *testing.T) {
	t.Parallel()
	direct := "airnode://127.0.0.1:26599/demo.Echo"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--listen", "127.0.0.1:0", "--registry", "memory://", "-p", "weight"}, `airnode: serve: -p "weight": want key=value`},
		{[]string{"call", "-p", "key", direct, "Echo", "1"}, `-p "key": want key=value`},
		{[]string{"bench", "-p", "key", "-n", "1", direct}, `airnode: bench: -p "key": want key=value`},
		{[]string{"serve", "--log-format", "xml"}, `airnode: serve: --log-format "xml": want text or json`},
		{[]string{"serve", "--log-level", "verbose"}, `airnode: serve: --log-level "verbose": want debug, info, warn or error`},
		{[]string{"registry", "ls", "--log-level", "verbose"}, `--log-level "verbose"`},
		{[]string{"serve", "--demo=maybe"}, `--demo "maybe": want true or false (also yes/no, on/off, 1/0, t/f); --demo alone is true`},
	} {
		r := runCommand(t, 20*time.Second, noAirnodeEnv, tc.args[0], tc.args[1:]...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

// tester nu54 finding 4: boolean flags take the spellings of the file
// and AIRNODE_* variables: --demo=no is --demo=false (serve has nothing
// to export), --demo=yes and AIRNODE_DEMO=t export demo.Echo.
func TestCfg3_BooleanSpellingsAreTheSameForFlagsAndEnv(t *testing.T) {
	t.Parallel()
	for _, no := range [][]string{{"--demo=no"}, {"--demo=off"}, {"--demo=0"}} {
		r := runCommand(t, 20*time.Second, noAirnodeEnv, "serve", append([]string{"--listen", "127.0.0.1:0", "--registry", "memory://"}, no...)...)
		if r.code != 1 || !strings.Contains(r.stderr, "nothing to export: demo is false") {
			t.Errorf("%v: exit %d, stderr %q; want demo false (nothing to export)", no, r.code, r.stderr)
		}
	}
	r := runCommand(t, 20*time.Second, append([]string{"AIRNODE_DEMO=no"}, noAirnodeEnv...), "serve", "--listen", "127.0.0.1:0", "--registry", "memory://")
	if r.code != 1 || !strings.Contains(r.stderr, "nothing to export: demo is false") {
		t.Errorf("AIRNODE_DEMO=no: exit %d, stderr %q", r.code, r.stderr)
	}
	serveWith(t, "127.0.0.1:0", "memory://", "--demo=yes") // waits for its serving line
	startServe(t, "127.0.0.1:0", "memory://", append([]string{"AIRNODE_DEMO=t"}, noAirnodeEnv...), "")
}

// tester nu54 finding 10: an error about serve's registry URL names
// where the URL came from: the file and its key, the variable or the
// flag.
func TestCfg3_RegistryErrorsNameTheirSource(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, "registry: \"zookeper://127.0.0.1:26598\"\n")
	r := runCommand(t, 20*time.Second, noAirnodeEnv, "serve", "--config", cfg, "--listen", "127.0.0.1:0")
	expectFail(t, r, "airnode: serve: registry zookeper://127.0.0.1:26598 ("+cfg+`: key "registry"): `, `did you mean "zookeeper"?`)
	r = runCommand(t, 20*time.Second, []string{"AIRNODE_REGISTRY=zookeper://127.0.0.1:26598"}, "serve", "--listen", "127.0.0.1:0")
	expectFail(t, r, "airnode: serve: AIRNODE_REGISTRY=zookeper://127.0.0.1:26598: ")
	r = runCommand(t, 20*time.Second, noAirnodeEnv, "serve", "--listen", "127.0.0.1:0", "--registry", "zookeper://127.0.0.1:26598")
	expectUsage(t, r, "airnode: serve: --registry zookeper://127.0.0.1:26598: ") // the command line's: exit 2 (fix-cj)
}

// tester nu54 finding 12: the --registry help of call, bench and
// registry names AIRNODE_REGISTRY, which they honour.
func TestCfg3_RegistryHelpNamesTheVariable(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"call", "--help"}, {"bench", "--help"}, {"registry", "ls", "--help"}, {"registry", "watch", "--help"}} {
		r := runCommand(t, 20*time.Second, nil, args[0], args[1:]...)
		if r.code != 0 || !strings.Contains(r.stdout, "(default: AIRNODE_REGISTRY, else the configuration's registry") {
			t.Errorf("%v: exit %d; --registry's help does not name AIRNODE_REGISTRY:\n%s", args, r.code, r.stdout)
		}
	}
}

// tester nu54 finding 10: serve's failure to start a plugin names the
// configuration file's key: plugins[i].command for a binary that cannot
// run, plugins[i].point for one declared under a point it does not
// provide, plugins[i].sha256 for a binary whose sha256 is not the
// pinned one (tester nu77 #6: it said plugins[i].command).
func TestCfg3_PluginStartErrorsNameTheirKey(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, "plugins:\n  - {name: acme.p2c, point: loadbalance, command: ./bin/nonexistent}\n")
	r := runCommand(t, 30*time.Second, noAirnodeEnv, "serve", "--config", cfg, "--listen", "127.0.0.1:0", "--registry", "memory://")
	expectFail(t, r, `airnode: serve: pluginhost: plugin "acme.p2c"`, "no such file or directory", "("+cfg+`: key "plugins[0].command")`)
	cfg = writeConfig(t, "plugins:\n  - {name: acme.dirreg, point: loadbalance, command: "+acmePlugin(t)+"}\n")
	r = runCommand(t, 30*time.Second, noAirnodeEnv, "serve", "--config", cfg, "--listen", "127.0.0.1:0", "--registry", "memory://")
	expectFail(t, r, `airnode: serve: pluginhost: plugin "acme.dirreg"`, "("+cfg+`: key "plugins[0].point")`)
	cfg = writeConfig(t, "plugins:\n  - {name: acme.p2c, point: loadbalance, sha256: '"+strings.Repeat("0", 64)+"', command: "+acmePlugin(t)+"}\n")
	r = runCommand(t, 30*time.Second, noAirnodeEnv, "serve", "--config", cfg, "--listen", "127.0.0.1:0", "--registry", "memory://")
	expectFail(t, r, `airnode: serve: pluginhost: plugin "acme.p2c"`, "sha256 mismatch: expected "+strings.Repeat("0", 64), "("+cfg+`: key "plugins[0].sha256")`)
}
