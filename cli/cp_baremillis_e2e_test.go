package cli

import (
	"strings"
	"testing"
	"time"
)

// bareMillisNote is the warning of a bare number likely meant as seconds,
// after the key or flag it was given to: spi.BareMillis's text.
func bareMillisNote(n string) string {
	return n + " is " + n + "ms (a bare number is milliseconds, as in Dubbo); write " + n + "s for seconds"
}

// tester95 #1: bench --duration 30 measured for 30 ms and exited 0 with
// no word of it. The CLI documents bare milliseconds for every duration
// flag, so it still runs 30 ms, but says so as the kernel says of
// --timeout 2; --duration 300 (at least 50 ms) is not warned of.
func TestBenchDurationBareNumberMeantAsSecondsIsWarnedOf(t *testing.T) {
	url := "airnode://127.0.0.1:38610/demo.Echo" // nothing listens: the warning comes first
	r := runCommand(t, 30*time.Second, nil, "bench", url, "--duration", "30")
	if want := "airnode: bench: warning: --duration " + bareMillisNote("30") + "\n"; !strings.Contains(r.stderr, want) {
		t.Errorf("bench --duration 30: stderr %q, want %q", r.stderr, want)
	}
	r = runCommand(t, 30*time.Second, nil, "bench", url, "--duration", "300")
	if strings.Contains(r.stderr, "a bare number is milliseconds") {
		t.Errorf("bench --duration 300 warned of: %q", r.stderr)
	}
}

// Every duration flag of every command warns of a bare number likely meant
// as seconds (2: under 50 for any), naming the flag, as bench --duration
// does; each command then fails on its other arguments.
func TestEveryDurationFlagWarnsOfABareNumberMeantAsSeconds(t *testing.T) {
	rest := map[string][]string{ // arguments that make each command fail at once
		"serve":        {"--listen", "127.0.0.1:0", "--registry", "nope://x"},
		"bench":        {"airnode://127.0.0.1:38611/demo.Echo"},
		"stats":        {"127.0.0.1:38611"},
		"plugin check": {"/nonexistent/airnode-plugin"},
	}
	for _, df := range durationFlags(t) {
		more, ok := rest[df[0]]
		if !ok {
			t.Errorf("airnode %s --%s: no failing arguments in this test's table: add them", df[0], df[1])
			continue
		}
		args := append(append(strings.Fields(df[0]), "--"+df[1], "2"), more...)
		r := runCommand(t, 30*time.Second, nil, args[0], args[1:]...)
		want := "airnode: " + df[0] + ": warning: --" + df[1] + " " + bareMillisNote("2") + "\n"
		if !strings.Contains(r.stderr, want) {
			t.Errorf("airnode %s: stderr %q, want %q", strings.Join(args, " "), r.stderr, want)
		}
	}
}

// tester95 #2: serve -p heartbeat.interval=60 (60 ms pings) and -p
// warmup=600 were accepted silently while timeout=5 was warned of: a
// bare number under a twentieth of its key's default (at least 50, at
// most 1000) is warned of for every duration key, shutdown.* included;
// reconnect.backoff=60 (default 100ms: under 50 only) and
// connect.timeout=3000 are not.
func TestServeWarnsOfEveryDurationKeyGivenABareNumberMeantAsSeconds(t *testing.T) {
	dir := t.TempDir()
	p := startServe(t, "127.0.0.1:0", "file://"+dir, []string{"XDG_RUNTIME_DIR=" + dir}, "",
		"-p", "heartbeat.interval=60", "-p", "warmup=600", "-p", "shutdown.wait=90",
		"-p", "reconnect.backoff=60", "-p", "connect.timeout=3000")
	p.waitServing(t, "demo.Echo")
	log := p.logText()
	for _, kv := range [][2]string{{"heartbeat.interval", "60"}, {"warmup", "600"}, {"shutdown.wait", "90"}} {
		if want := `msg="` + kv[0] + "=" + bareMillisNote(kv[1]) + `"`; !strings.Contains(log, want) {
			t.Errorf("serve log lacks %q:\n%s", want, log)
		}
	}
	for _, no := range []string{"reconnect.backoff=60 is", "connect.timeout=3000 is"} {
		if strings.Contains(log, no) {
			t.Errorf("serve log has %q:\n%s", no, log)
		}
	}
}

// A URL key's variable given a bare number likely meant as seconds is
// warned of as -p's value is, once, by the kernel: AIRNODE_PROVIDER_TIMEOUT=5
// reached the exported URL as 5 ms with no word (the config layer had
// made it "5ms" before Export's own check of timeout=5 could see it;
// fix-cp warned from the command line instead, fix-ct keeps the value as
// written so that Export and Refer warn of it themselves), and so did
// AIRNODE_CONSUMER_TIMEOUT=5 on a call. The URL carries timeout=5, what the
// kernel reads. A bare number at or over the bound
// (AIRNODE_PROVIDER_HEARTBEAT_INTERVAL=60000) and a key that is no
// duration (AIRNODE_PROVIDER_WEIGHT=5) are not warned of.
//
// fix-dd: the warning names the variable the user set
// (AIRNODE_PROVIDER_TIMEOUT=5 is ...), not the key (timeout=5), in
// serve's log, call's and list --explain's; a -p timeout=5 over the
// variable is named as the key.
func TestURLKeyVariableBareNumberMeantAsSecondsIsWarnedOf(t *testing.T) {
	const note = "_TIMEOUT=5 is 5ms (a bare number is milliseconds, as in Dubbo); write 5s for seconds"
	env := []string{"AIRNODE_PROVIDER_TIMEOUT=5", "AIRNODE_PROVIDER_HEARTBEAT_INTERVAL=60000", "AIRNODE_PROVIDER_WEIGHT=5"}
	p := startServe(t, "127.0.0.1:0", "memory://", env, "")
	p.waitServing(t, "demo.Echo")
	log := p.logText()
	if c := strings.Count(log, "AIRNODE_PROVIDER"+note); c != 1 {
		t.Errorf("serve with AIRNODE_PROVIDER_TIMEOUT=5 warned %d times of %q, want once:\n%s", c, "AIRNODE_PROVIDER"+note, log)
	}
	if !strings.Contains(log, "&timeout=5&") {
		t.Errorf("serve with AIRNODE_PROVIDER_TIMEOUT=5: no timeout=5 in the exported URL:\n%s", log)
	}
	for _, quiet := range []string{"AIRNODE_PROVIDER_HEARTBEAT", "AIRNODE_PROVIDER_WEIGHT", "heartbeat.interval=60000 is", "weight=5 is", `msg="timeout=5 is`} {
		if strings.Contains(log, quiet) {
			t.Errorf("serve warned of %s...:\n%s", quiet, log)
		}
	}
	for _, args := range [][]string{
		{"call", p.url("demo.Echo"), "Echo", `"x"`},
		{"list", "--explain", p.url("demo.Echo")},
	} {
		r := runCommand(t, 30*time.Second, []string{"AIRNODE_CONSUMER_TIMEOUT=5"}, args[0], args[1:]...)
		if c := strings.Count(r.stderr, note); c != 1 || !strings.Contains(r.stderr, "AIRNODE_CONSUMER"+note) {
			t.Errorf("%s with AIRNODE_CONSUMER_TIMEOUT=5 warned %d times of %q, want once, naming AIRNODE_CONSUMER_TIMEOUT; stderr:\n%s", args[0], c, note, r.stderr)
		}
		if strings.Contains(r.stderr, "timeout=5 is") {
			t.Errorf("%s warned of the key as well as of the variable; stderr:\n%s", args[0], r.stderr)
		}
	}
	// the command line's -p timeout=5 over the variable's: the key
	r := runCommand(t, 30*time.Second, []string{"AIRNODE_CONSUMER_TIMEOUT=5"}, "call", "-p", "timeout=5", p.url("demo.Echo"), "Echo", `"x"`)
	if r.code != 0 || strings.Count(r.stderr, "timeout=5 is 5ms") != 1 || strings.Contains(r.stderr, "AIRNODE_CONSUMER_TIMEOUT=5 is") {
		t.Errorf("call -p timeout=5 with AIRNODE_CONSUMER_TIMEOUT=5: exit %d, stderr:\n%s\nwant exit 0 and one warning naming timeout=5", r.code, r.stderr)
	}
}

// fix-di #4: serve -p timeout=5 with AIRNODE_PROVIDER_TIMEOUT=5 set too
// warned of the variable (AIRNODE_PROVIDER_TIMEOUT=5 is 5ms ...), though
// the command line's -p is the value used (flags win over the
// environment): the warning names the key, as call's does.
func TestServeParamOverVariableBareNumberNamesTheKey(t *testing.T) {
	p := startServe(t, "127.0.0.1:0", "memory://", []string{"AIRNODE_PROVIDER_TIMEOUT=5"}, "", "-p", "timeout=5")
	p.waitServing(t, "demo.Echo")
	log := p.logText()
	if c := strings.Count(log, `msg="timeout=`+bareMillisNote("5")+`"`); c != 1 || strings.Contains(log, "AIRNODE_PROVIDER_TIMEOUT=5 is") {
		t.Errorf("serve -p timeout=5 with AIRNODE_PROVIDER_TIMEOUT=5 warned %d times naming timeout=5, want once and never the variable:\n%s", c, log)
	}
}
