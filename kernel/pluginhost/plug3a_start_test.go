package pluginhost_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/internal/testbin"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/pluginhost"
	"github.com/airnode/airnode/sdk/pluginrpc"
)

// plug3aSpec declares the plug3a test filter plugin with env.
func plug3aSpec(env map[string]string) config.Plugin {
	return config.Plugin{Name: "acme.plug3a", Point: "filter", Command: binary("plug3a"), Env: env, Restart: config.RestartAlways}
}

// debugLogger logs text records of every level to a buffer.
func debugLogger() (*slog.Logger, *logbuf.Buffer) {
	logs := &logbuf.Buffer{}
	return slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), logs
}

// A plugin that panics before sdk.Serve: the start error quotes the
// panic and where it happened (the plugin's own file and line), not "writing
// nothing on stdout or stderr; is it an airnode plugin" (go-plugin logs a
// panic's lines at error, so they were not taken for stderr lines), nor
// an ordinary line the plugin wrote before it panicked; in the log, that
// line (warn) comes before the panic (error), as the plugin wrote them.
func TestPlug3aPanicBeforeServeIsQuoted(t *testing.T) {
	for _, lines := range []string{"0", "1"} {
		t.Run("lines="+lines, func(t *testing.T) {
			logger, logs := debugLogger()
			_, _, err := startHostLogging(t, logger, plug3aSpec(map[string]string{"PLUG3A_PANIC": "1", "PLUG3A_LINES": lines}))
			if err == nil {
				t.Fatal("a plugin that panics at start started")
			}
			msg := err.Error()
			t.Log(msg)
			want := `exited with status 2 before the handshake: it panicked: "panic: assignment to entry in nil map" in main.main at `
			if !strings.Contains(msg, want) || !strings.Contains(msg, "plug3a/main.go:") || !strings.Contains(msg, `plugin "acme.plug3a"`) {
				t.Fatalf("start error %q; want it to quote the panic and where: %q, plug3a/main.go:N", msg, want)
			}
			if strings.Contains(msg, "writing nothing") || strings.Contains(msg, "early line") {
				t.Fatalf("start error %q quotes no panic, or an older line", msg)
			}
			text := logs.String()
			p := strings.Index(text, `level=ERROR msg="panic: assignment to entry in nil map"`)
			if p < 0 {
				t.Fatalf("the panic is not logged at error:\n%s", text)
			}
			if lines == "1" {
				e := strings.Index(text, `level=WARN msg="early line 0"`)
				if e < 0 || e > p {
					t.Fatalf("the line written before the panic is not logged at warn before it:\n%s", text)
				}
			}
		})
	}
}

// earlyLine matches the log records of the lines plug3a writes before
// sdk.Serve.
var earlyLine = regexp.MustCompile(`level=(\w+) msg="early line (\d+)"`)

// Stderr lines written before the handshake reach the host's log in the
// order the plugin wrote them, each once, at info once it runs: the
// first 100 and the last 100 of them, held until the start's outcome is
// known, with one line between saying how many were left out (before,
// every line was logged as it came, beyond 200 at once, and a plugin
// that wrote many waited on the host's log: tester88 #1). The last 100
// lines end with the plugin's own debug record "plugin address"
// (go-plugin's Serve logs it before the handshake), held with them
// (fix-bx): the last 99 early lines are logged, then it.
func TestPlug3aEarlyStderrKeepsItsOrder(t *testing.T) {
	const n = 1000
	logger, logs := debugLogger()
	h, _, err := startHostLogging(t, logger, plug3aSpec(map[string]string{"PLUG3A_LINES": strconv.Itoa(n)}))
	if err != nil {
		t.Fatal(err)
	}
	if i := info(t, h, "acme.plug3a"); i.State != pluginhost.StateRunning {
		t.Fatalf("state %+v", i)
	}
	var want []int
	for i := range n {
		if i < 100 || i >= n-99 {
			want = append(want, i)
		}
	}
	text := logs.String()
	got := earlyLine.FindAllStringSubmatch(text, -1)
	if len(got) != len(want) {
		t.Fatalf("%d of the %d early lines logged; want %d", len(got), n, len(want))
	}
	for i, m := range got {
		if m[2] != strconv.Itoa(want[i]) || m[1] != "INFO" {
			t.Fatalf("log record %d is early line %s at %s; want line %d at INFO", i, m[2], m[1], want[i])
		}
	}
	if m := leftOut.FindStringSubmatch(text); m == nil || m[2] != strconv.Itoa(n-199) || m[1] != "WARN" {
		t.Fatalf("no line saying %d early lines were left out:\n%s", n-199, text)
	}
	if last, addr := strings.Index(text, fmt.Sprintf(`msg="early line %d"`, n-1)), strings.Index(text, `level=DEBUG msg="plugin address"`); addr < last {
		t.Fatalf("the plugin's \"plugin address\" record is not logged after its last early line:\n%s", text[last:])
	}
}

// A plugin of another plugin protocol version: the error names both
// versions, says which side is newer and what to do, and does not quote
// go-plugin's debug line "plugin address" as the plugin's last words.
func TestPlug3aProtocolMismatchSaysWhichSideIsNewer(t *testing.T) {
	host := pluginrpc.ProtocolVersion
	for _, tt := range []struct {
		version int
		want    []string
	}{
		{host + 1, []string{"it speaks plugin protocol version " + strconv.Itoa(host+1) + ", newer than this host's " + strconv.Itoa(host),
			"upgrade airnode to a release that speaks version " + strconv.Itoa(host+1), "`airnode version`"}},
		{host - 1, []string{"it speaks plugin protocol version " + strconv.Itoa(host-1) + ", older than this host's " + strconv.Itoa(host),
			"rebuild the plugin against the sdk of this airnode release"}},
	} {
		s := config.Plugin{Name: "future", Point: "loadbalance", Command: binary("versions"),
			Env: map[string]string{"TEST_PLUGIN_VERSIONS": strconv.Itoa(tt.version)}}
		_, _, err := startHost(t, s)
		if err == nil {
			t.Fatalf("version %d: started", tt.version)
		}
		t.Log(err)
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Fatalf("version %d: error %q lacks %q", tt.version, err, w)
			}
		}
		if strings.Contains(err.Error(), "plugin address") {
			t.Fatalf("version %d: error %q quotes go-plugin's debug line", tt.version, err)
		}
	}
}

// A pinned binary replaced in place (an upgrade without updating
// sha256), then the plugin exits: the restart is refused once, not
// retried every backoff with "plugin exited" for a process that never
// started. The plugin is failed (GaveUp, so serve unregisters what
// depends on it) with what to do; no process is started while the file
// does not match; once the pinned binary is back, the plugin runs again.
func TestPlug3aSHA256MismatchAtRestartWaitsForThePinnedBinary(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p2c")
	testbin.ReplaceFile(t, binary("p2c"), path)
	s := p2cSpec()
	s.Command, s.SHA256 = path, fileSum(t, path)
	logger, logs := debugLogger()
	h := pluginhost.New([]config.Plugin{s}, pluginhost.WithLogger(logger), pluginhost.WithBackoff(20*time.Millisecond, 300*time.Millisecond))
	t.Cleanup(func() { _ = h.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	pid := info(t, h, p2cName).PID
	testbin.ReplaceFile(t, binary("greeter"), path) // the "upgrade"
	upgraded := fileSum(t, path)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for info(t, h, p2cName).State != pluginhost.StateFailed {
		if time.Now().After(deadline) {
			t.Fatalf("state %+v; want failed", info(t, h, p2cName))
		}
		time.Sleep(10 * time.Millisecond)
	}
	i := info(t, h, p2cName)
	t.Log(i.Reason)
	for _, w := range []string{"sha256 mismatch: expected " + s.SHA256 + ", actual " + upgraded, "put back the binary whose sha256 is " + s.SHA256,
		"set this plugin's sha256 in plugins.yaml to " + upgraded} {
		if !strings.Contains(i.Reason, w) {
			t.Fatalf("reason %q lacks %q", i.Reason, w)
		}
	}
	if !i.GaveUp() {
		t.Fatal("a plugin refused for its checksum is not given up on")
	}
	time.Sleep(1500 * time.Millisecond) // five checks of the file
	text := logs.String()
	if n := strings.Count(text, "plugin exited; restarting"); n != 1 {
		t.Fatalf(`"plugin exited; restarting" logged %d times, want 1 (the real exit):\n%s`, n, text)
	}
	if n := strings.Count(text, "not the pinned one"); n != 1 {
		t.Fatalf("the refusal logged %d times, want 1:\n%s", n, text)
	}
	if n := strings.Count(text, `msg="plugin running"`); n != 1 || strings.Contains(text, "restart failed") {
		t.Fatalf("a process was started while the binary did not match (%d plugin running):\n%s", n, text)
	}
	testbin.ReplaceFile(t, binary("p2c"), path) // the pinned binary is back
	back := time.Now()
	i = waitRunning(t, h, p2cName, pid)
	t.Logf("running again %v after the pinned binary was put back (checks every 300ms)", time.Since(back).Round(time.Millisecond))
	if i.GaveUp() || i.Reason != "" {
		t.Fatalf("info %+v", i)
	}
}

// A binary declared under a point it does not provide: the error says
// what it provides and which point to declare.
func TestPlug3aWrongPointSaysWhatTheBinaryProvides(t *testing.T) {
	s := plug3aSpec(nil)
	s.Point = "loadbalance"
	h, _, err := startHost(t, s)
	want := `plugin does not provide point "loadbalance"; it provides filter "plug3a": declare it with point: filter`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v; want %q", err, want)
	}
	// `airnode list` tells this failure from others by ProvidedPoints
	if i := info(t, h, s.Name); i.State != pluginhost.StateFailed || !slices.Equal(i.ProvidedPoints, []string{"filter"}) {
		t.Fatalf("info %+v; want failed with ProvidedPoints [filter]", i)
	}
	s.Point = "filter"
	h, _, err = startHost(t, s)
	if i := info(t, h, s.Name); err != nil || i.ProvidedPoints != nil {
		t.Fatalf("declared right: err %v, info %+v; want it running, ProvidedPoints nil", err, i)
	}
}
