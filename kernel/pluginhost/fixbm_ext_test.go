package pluginhost_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/testbin"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/pluginhost"
)

// leftOut matches the line saying how many early stderr lines were left
// out.
var leftOut = regexp.MustCompile(`level=(\w+) msg="plugin output lines left out before the handshake: more than the bound"[^\n]* stream=stderr suppressed=(\d+)`)

// A plugin that writes 300,000 lines on stderr before sdk.Serve starts,
// the host spending under 5s of CPU on the start: it reads the plugin's
// stderr without logging each line as it comes (it logged them one by
// one, about 17,000 lines a second under -race, the plugin waited on its
// stderr pipe, and the start failed with "no handshake within
// start_timeout 3s": tester88 #1). The bound is on the host's CPU time,
// not the wall clock: on a loaded machine (load 28-30 on 2 vCPUs) the
// start took more than a 5s start_timeout 2 times in 10. The log holds the first 100
// and the last 99 of them (the plugin's debug record "plugin address"
// is the last of the last 100 lines: TestPlug3aEarlyStderrKeepsItsOrder),
// at info, in order, and one line saying how many were left out between
// them.
func TestFixbmEarlyStderrFloodStartsWithinStartTimeout(t *testing.T) {
	const n = 300000
	logger, logs := debugLogger()
	s := plug3aSpec(map[string]string{"PLUG3A_LINES": strconv.Itoa(n)})
	s.StartTimeout = time.Minute
	const maxCPU = 5 * time.Second // the old host's 300,000 lines took about 17s of it
	began, cpu := time.Now(), cpuTime(t)
	h, _, err := startHostLogging(t, logger, s)
	if err != nil {
		t.Fatalf("a plugin writing %d lines before sdk.Serve did not start within %v: %v", n, s.StartTimeout, err)
	}
	cpu = cpuTime(t) - cpu
	t.Logf("started in %v, the host using %v of CPU", time.Since(began).Round(time.Millisecond), cpu.Round(time.Millisecond))
	if cpu > maxCPU {
		t.Fatalf("the host used %v of CPU starting a plugin that writes %d lines before sdk.Serve; want under %v", cpu, n, maxCPU)
	}
	if i := info(t, h, "acme.plug3a"); i.State != pluginhost.StateRunning {
		t.Fatalf("state %+v", i)
	}
	text := logs.String()
	got := earlyLine.FindAllStringSubmatch(text, -1)
	var want []int
	for i := range 100 {
		want = append(want, i)
	}
	for i := n - 99; i < n; i++ {
		want = append(want, i)
	}
	if len(got) != len(want) {
		t.Fatalf("%d early lines logged; want the first 100 and the last 99", len(got))
	}
	for i, m := range got {
		if m[2] != strconv.Itoa(want[i]) || m[1] != "INFO" {
			t.Fatalf("log record %d is early line %s at %s; want line %d at INFO", i, m[2], m[1], want[i])
		}
	}
	lo := leftOut.FindAllStringSubmatchIndex(text, -1)
	if len(lo) != 1 {
		t.Fatalf("%d lines say how many early lines were left out; want 1:\n%s", len(lo), text[:min(len(text), 4000)])
	}
	if sup := text[lo[0][4]:lo[0][5]]; sup != strconv.Itoa(n-199) {
		t.Fatalf("suppressed=%s; want %d", sup, n-199)
	}
	if first, last := strings.Index(text, `msg="early line 99"`), strings.Index(text, `msg="early line 299901"`); !(first < lo[0][0] && lo[0][0] < last) {
		t.Fatalf("the left-out line is not between line 99 and line 299901:\n%s", text[:min(len(text), 4000)])
	}
}

// A plugin that writes many lines and then panics before sdk.Serve: the
// start error still quotes the panic and where, the panic is logged at
// error after the last early lines (at warn), and the lines between are
// left out, counted.
func TestFixbmEarlyStderrFloodThenPanicKeepsThePanic(t *testing.T) {
	logger, logs := debugLogger()
	_, _, err := startHostLogging(t, logger, plug3aSpec(map[string]string{"PLUG3A_LINES": "5000", "PLUG3A_PANIC": "1"}))
	if err == nil || !strings.Contains(err.Error(), `it panicked: "panic: assignment to entry in nil map" in main.main at `) {
		t.Fatalf("err = %v; want the panic quoted", err)
	}
	text := logs.String()
	p := strings.Index(text, `level=ERROR msg="panic: assignment to entry in nil map"`)
	last := strings.Index(text, `level=WARN msg="early line 4999"`)
	if p < 0 || last < 0 || last > p {
		t.Fatalf("want early line 4999 at warn, then the panic at error:\n%s", text)
	}
	if !strings.Contains(text, "main.main()") {
		t.Fatalf("the panic's stack is not logged:\n%s", text)
	}
	if got := len(earlyLine.FindAllString(text, -1)); got > 200 {
		t.Fatalf("%d early lines logged; want at most 200", got)
	}
	if m := leftOut.FindStringSubmatch(text); m == nil || m[1] != "WARN" {
		t.Fatalf("no warning saying how many early lines were left out:\n%s", text)
	}
}

// A binary built against another go-plugin handshake (its magic cookie
// is not airnode's) exits at once with go-plugin's "This binary is a
// plugin. These are not meant to be executed directly.": the error says
// it was built against a different handshake and to rebuild it with
// airnode's sdk, not just quote that text (tester88 #2).
func TestFixbmWrongMagicCookieSaysRebuildWithTheSDK(t *testing.T) {
	s := config.Plugin{Name: "othercookie", Point: "loadbalance", Command: binary("versions"),
		Env: map[string]string{"TEST_PLUGIN_VERSIONS": "1", "TEST_PLUGIN_COOKIE": "not-airnode"}}
	_, _, err := startHost(t, s)
	if err == nil {
		t.Fatal("a plugin with another magic cookie started")
	}
	t.Log(err)
	for _, w := range []string{`plugin "othercookie"`, "exited with status 1 before the handshake",
		"built against a different go-plugin handshake (magic cookie) than airnode's sdk",
		"rebuild it with airnode's sdk (github.com/airnode/airnode/sdk, sdk.Serve)"} {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("error %q lacks %q", err, w)
		}
	}
}

// A command: that names no file says why when the reason is likely
// (tester88 #3): a command line where the binary's path alone belongs,
// the first word being a file (arguments go in args:), and a path
// starting with ~, which no shell expands. Before, both gave a bare
// "no such file or directory".
func TestFixbmCommandHints(t *testing.T) {
	dir := t.TempDir()
	p2c := filepath.Join(dir, "p2c")
	testbin.ReplaceFile(t, binary("p2c"), p2c)
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ command, want string }{
		{p2c + " --debug -v", "no such file or directory; command: is the binary's path alone, not a command line, and " + p2c +
			` exists: put the arguments in args: (command: ` + p2c + `, args: ["--debug", "-v"])`},
		{"~/airnode-fixbm-none/p2c", "no such file or directory; command: starts with ~, which airnode does not expand (no shell reads plugins.yaml): " +
			"write the binary's full path (" + filepath.Join(home, "airnode-fixbm-none/p2c") + ")"},
	} {
		for _, sum := range []string{"", strings.Repeat("a", 64)} { // with a sha256, the checksum fails first
			s := config.Plugin{Name: "acme.p2c", Point: "loadbalance", Command: tc.command, SHA256: sum}
			_, _, err := startHost(t, s)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("command %q, sha256 %q: %v; want %q", tc.command, sum, err, tc.want)
			}
		}
	}
	// a missing path of one word gets no hint
	_, _, err = startHost(t, config.Plugin{Name: "acme.p2c", Point: "loadbalance", Command: filepath.Join(dir, "none")})
	if err == nil || !strings.HasSuffix(err.Error(), "no such file or directory") {
		t.Fatalf("err = %v", err)
	}
}

// cpuTime is the CPU time (user and system) this process has used. Tests
// not marked parallel run alone, so a difference of two is the test's.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
