package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Tester nu41 (items 1, 2, 12): an unknown subcommand of registry or
// plugin printed help on stdout and exited 0; usage errors exited 1, as a
// failed call does, with cobra's "accepts 1 arg(s), received 0". Usage
// errors now exit 2 naming what is wrong; a bare group prints its help
// and exits 0, as a bare airnode does.
func TestNu41_UsageErrorsExit2(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"registry", "add", "x"}, []string{`airnode: registry: unknown command "add" (available: ls, watch)`}},
		{[]string{"plugin", "frob"}, []string{`airnode: plugin: unknown command "frob" (available: check)`}},
		{[]string{"frob"}, []string{`airnode: unknown command "frob" (available: bench, call,`}},
		{[]string{"completion", "tcsh"}, []string{`airnode: completion: unknown command "tcsh" (available: bash, fish, powershell, zsh)`}}, // tester65 #4: help, exit 0 before
		{[]string{"stats"}, []string{"airnode: stats: missing ADDR (usage: airnode stats ADDR [flags])"}},
		{[]string{"call", "demo.Echo"}, []string{"airnode: call: missing METHOD (usage: airnode call [flags] SERVICE_URL METHOD"}},
		{[]string{"registry", "watch"}, []string{"airnode: registry watch: missing SERVICE (usage: airnode registry watch SERVICE [flags])"}},
		{[]string{"serve", "extra"}, []string{`airnode: serve: unexpected argument "extra": it takes no arguments`}},
		{[]string{"call", "--bogus", "demo.Echo", "Echo"}, []string{"airnode: call: unknown flag --bogus (airnode call --help lists its flags)"}},
		{[]string{"call", "--timout", "1s", "demo.Echo", "Echo"}, []string{"airnode: call: unknown flag --timout; did you mean --timeout?"}}, // tester75 #4
		{[]string{"stats", "--timeout", "abc", "127.0.0.1:1"}, []string{`stats: --timeout "abc": want a duration`}},
		{[]string{"call", "--timeout", "abc", "demo.Echo", "Echo", "1"}, []string{`airnode: call: --timeout "abc": want a duration`}},
		{[]string{"call", "--timeout=", "demo.Echo", "Echo"}, []string{`airnode: call: --timeout "": want a duration`}}, // tester75 #7: taken for no flag
	} {
		r := runCommand(t, 20*time.Second, nil, tc.args[0], tc.args[1:]...)
		if r.code != exitUsage || r.stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2, no stdout", tc.args, r.code, r.stdout, r.stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%v: stderr %q lacks %q", tc.args, r.stderr, w)
			}
		}
	}
	for _, args := range [][]string{{"registry"}, {"plugin"}} {
		r := runCommand(t, 20*time.Second, nil, args[0], args[1:]...)
		if r.code != 0 || !strings.Contains(r.stdout, "Available Commands:") || r.stderr != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want its help and exit 0", args, r.code, r.stdout, r.stderr)
		}
	}
	r := runCommand(t, 20*time.Second, nil, "--help")
	for _, w := range []string{"Exit status:", "  2    usage error", "  130  interrupted by SIGINT", "  143  interrupted by SIGTERM"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("airnode --help lacks %q:\n%s", w, r.stdout)
		}
	}
}

// Tester nu41 (items 3, 4): under --log-format json the final error line
// (serve's port in use), call's failure line and the logs' durations were
// not JSON / were integers of nanoseconds.
func TestNu41_JSONLogFormatEveryLine(t *testing.T) {
	dir := t.TempDir()
	env := []string{"AIRNODE_REGISTRY=file://" + dir}
	lines := func(what, stderr string) []map[string]any {
		t.Helper()
		var out []map[string]any
		for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("%s: stderr line %q is not JSON: %v", what, l, err)
			}
			out = append(out, m)
		}
		return out
	}
	// call's failure: a record with level, msg and status
	r := call(t, env, "--log-format", "json", "demo.Echo", "Echo", "1")
	recs := lines("call", r.stderr)
	last := recs[len(recs)-1]
	if r.code != 1 || last["level"] != "ERROR" || last["status"] != "SERVICE_NOT_FOUND" ||
		!strings.HasPrefix(last["msg"].(string), "no provider available for demo.Echo") {
		t.Errorf("call: exit %d, stderr %q", r.code, r.stderr)
	}
	// text stays as it was
	r = call(t, env, "demo.Echo", "Echo", "1")
	if r.code != 1 || !strings.HasPrefix(r.stderr, "SERVICE_NOT_FOUND: no provider available") {
		t.Errorf("call, text: exit %d, stderr %q", r.code, r.stderr)
	}
	// serve's fatal line (port in use) and its durations
	p := serve(t, "127.0.0.1:0", dir) // port 0: a fixed one can be another test's ephemeral port
	r = runCommand(t, 20*time.Second, []string{"XDG_RUNTIME_DIR=" + dir}, "serve", "--log-format", "json",
		"--listen", p.addr, "--registry", "file://"+dir, "--shutdown-wait", "2s")
	recs = lines("serve", r.stderr)
	last = recs[len(recs)-1]
	if r.code != 1 || last["level"] != "ERROR" || !strings.Contains(last["msg"].(string), "address already in use") {
		t.Errorf("serve on a busy port: exit %d, stderr %q", r.code, r.stderr)
	}
	for _, rec := range recs {
		if rec["msg"] == "airnode serve: shutting down" && rec["wait"] != nil {
			if _, ok := rec["wait"].(string); !ok {
				t.Errorf("wait %v is not Go duration text", rec["wait"])
			}
		}
	}
	// a usage error too
	r = runCommand(t, 20*time.Second, nil, "--log-format", "json", "stats")
	recs = lines("stats", r.stderr)
	if r.code != exitUsage || !strings.HasPrefix(recs[0]["msg"].(string), "stats: missing ADDR") {
		t.Errorf("stats: exit %d, stderr %q", r.code, r.stderr)
	}
}

// Tester nu41 (item 4): the JSON handler writes durations as Go's text.
func TestNu41_JSONDurations(t *testing.T) {
	var b strings.Builder
	l, err := newLogger(&b, "info", "json")
	if err != nil {
		t.Fatal(err)
	}
	l.Info("x", "wait", 2*time.Second, "took", 1500*time.Microsecond)
	var m map[string]any
	if err := json.Unmarshal([]byte(b.String()), &m); err != nil || m["wait"] != "2s" || m["took"] != "1.5ms" {
		t.Fatalf("record %s (%v): want wait \"2s\", took \"1.5ms\"", b.String(), err)
	}
}

// Tester nu41 (item 6): version and list > /dev/full exited 0.
func TestNu41_WriteErrorOnStdout(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("open /dev/full: %v", err)
	}
	defer full.Close()
	for _, args := range [][]string{{"version"}, {"list"}} {
		cmd := exec.Command(binary, args...)
		cmd.Stdout = full
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "no space left on device") {
			t.Errorf("%v > /dev/full: %v, stderr %q; want exit 1 naming the write error", args, err, stderr.String())
		}
	}
}

// Tester nu41 (items 6, 7, 10): help texts.
func TestNu41_HelpTexts(t *testing.T) {
	r := runCommand(t, 20*time.Second, nil, "stats", "--help")
	if strings.Contains(r.stdout, "got SERVICE_ERROR") || !strings.Contains(r.stdout, "got BAD_REQUEST") ||
		!strings.Contains(r.stdout, "failures_by_status (status name -> count; {} when none)") {
		t.Errorf("stats --help:\n%s", r.stdout)
	}
	r = runCommand(t, 20*time.Second, nil, "bench", "--help")
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.Count(l, "(default") > 1 || strings.Contains(l, "--duration") && strings.Contains(l, "(default 0s)") {
			t.Errorf("bench --help: %q", l)
		}
	}
	if !strings.Contains(r.stdout, "(default max(min(n/10, 10000), 2c); 2000 with --duration; none with --rate)") {
		t.Errorf("bench --help lacks --warmup's default:\n%s", r.stdout)
	}
}

// Tester nu41 (item 9): call, bench and registry watch created a mistyped
// file registry directory, after which registry ls no longer reported
// the typo. They fail as ls does, create nothing, and say where the URL
// came from.
func TestNu41_MissingRegistryDirectoryNotCreated(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "typo")
	for _, tc := range []struct {
		sub  string
		args []string
		env  []string
		want string
	}{
		{"call", []string{"--registry", "file://" + missing, "demo.Echo", "Echo", "1"}, nil, "(is --registry file://" + missing + " the directory serve uses?)"},
		{"call", []string{"demo.Echo", "Echo", "1"}, []string{"AIRNODE_REGISTRY=file://" + missing}, "(is AIRNODE_REGISTRY=file://" + missing + " the directory serve uses?)"},
		{"bench", []string{"--registry", "file://" + missing, "demo.Echo", "-n", "10"}, nil, "bench: file registry directory " + missing + " does not exist"},
		{"registry", []string{"watch", "demo.Echo"}, []string{"AIRNODE_REGISTRY=file://" + missing}, "registry watch: file registry directory " + missing + " does not exist: no node has registered there (is AIRNODE_REGISTRY="},
		{"registry", []string{"ls"}, []string{"AIRNODE_REGISTRY=file://" + missing}, "(is AIRNODE_REGISTRY=file://" + missing + " the directory serve uses?)"},
	} {
		r := runCommand(t, 20*time.Second, tc.env, tc.sub, tc.args...)
		if r.code != 1 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s %v: exit %d, stderr %q; want exit 1 and %q", tc.sub, tc.args, r.code, r.stderr, tc.want)
		}
		if _, err := os.Stat(missing); !os.IsNotExist(err) {
			t.Fatalf("%s %v created %s (%v)", tc.sub, tc.args, missing, err)
		}
	}
}

// Tester nu41 (item 8): registry watch's banner went to stdout with the
// events; --json prints one object per line.
func TestNu41_RegistryWatchJSON(t *testing.T) {
	dir := t.TempDir()
	p := serve(t, "127.0.0.1:0", dir)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "registry", "watch", "--json", "--registry", "file://"+dir, "demo.Echo")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	var evs []watchEvent
	for len(evs) < 2 && sc.Scan() {
		var ev watchEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q is not a watch event: %v", sc.Text(), err)
		}
		evs = append(evs, ev)
	}
	_ = cmd.Process.Signal(os.Interrupt)
	_ = cmd.Wait()
	if len(evs) < 2 {
		t.Fatalf("events %+v, stderr %q", evs, stderr.String())
	}
	if evs[0].Event != "added" || evs[0].Service != "demo.Echo" || !strings.Contains(evs[0].URL, p.addr) || evs[0].Providers != 1 {
		t.Errorf("first event %+v", evs[0])
	}
	if evs[1].Event != "count" || evs[1].URL != "" || evs[1].Providers != 1 {
		t.Errorf("second event %+v", evs[1])
	}
	if _, err := time.Parse(time.RFC3339, evs[0].Time); err != nil {
		t.Errorf("time %q: %v", evs[0].Time, err)
	}
	if !strings.Contains(stderr.String(), "watching demo.Echo in file://"+dir+" (Ctrl-C to stop)") {
		t.Errorf("stderr %q lacks the banner", stderr.String())
	}
}
