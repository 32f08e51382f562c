package pluginhost_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/internal/testbin"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/kernel/pluginhost"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// bin holds the plugin binaries built once by TestMain.
var bin string

func TestMain(m *testing.M) {
	testbin.Main(m, func(dir string) { bin = dir },
		"github.com/airnode/airnode/examples/p2c/cmd/p2c",
		"github.com/airnode/airnode/examples/greeter/cmd/greeter",
		"github.com/airnode/airnode/examples/staticregistry/cmd/staticregistry",
		"github.com/airnode/airnode/cli/testdata/badmethods",
		"github.com/airnode/airnode/cli/testdata/filterplugin",
		"./testdata/junk", "./testdata/empty", "./testdata/host", "./testdata/versions", "./testdata/chatty", "./testdata/work", "./testdata/plug3a",
		"./testdata/chainfilter", "./testdata/unaryfilter", "./testdata/keyfilter", "./testdata/keyfilter2", "./testdata/secretkeyfilter", "./testdata/argslb", "./testdata/noargslb", "./testdata/cutoff")
}

func binary(name string) string { return filepath.Join(bin, name) }

func extensionCatalogs(testing.TB) *extension.Catalogs { return bundle.Catalogs() }

func spitest3() spi.Invoker {
	return spitest.NewStubInvoker(spi.MustParse("airnode://127.0.0.3:1/demo.Echo"), nil)
}

func testLogger(testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// startHost starts a Host for specs, registers it in catalogs holding the
// bundled extensions, and closes it at cleanup.
func startHost(t *testing.T, specs ...config.Plugin) (*pluginhost.Host, *extension.Catalogs, error) {
	t.Helper()
	return startHostLogging(t, testLogger(t), specs...)
}

// startHostLogging is startHost with the host logging to logger.
func startHostLogging(t *testing.T, logger *slog.Logger, specs ...config.Plugin) (*pluginhost.Host, *extension.Catalogs, error) {
	t.Helper()
	return startHostWith(t, []pluginhost.Option{pluginhost.WithLogger(logger)}, specs...)
}

// startHostWith is startHost with the host's options opts (a backoff of
// 50ms to 1s comes first: opts may change it).
func startHostWith(t *testing.T, opts []pluginhost.Option, specs ...config.Plugin) (*pluginhost.Host, *extension.Catalogs, error) {
	t.Helper()
	h := pluginhost.New(specs, append([]pluginhost.Option{pluginhost.WithLogger(testLogger(t)), pluginhost.WithBackoff(50*time.Millisecond, time.Second)}, opts...)...)
	t.Cleanup(func() { _ = h.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := h.Start(ctx)
	c := bundle.Catalogs()
	if rerr := h.Register(c); rerr != nil {
		err = errors.Join(err, rerr)
	}
	return h, c, err
}

func info(t *testing.T, h *pluginhost.Host, name string) pluginhost.PluginInfo {
	t.Helper()
	for _, i := range h.Plugins() {
		if i.Name == name {
			return i
		}
	}
	t.Fatalf("no plugin %q in %v", name, h.Plugins())
	return pluginhost.PluginInfo{}
}

// waitRunning waits until the plugin runs with a PID other than not.
func waitRunning(t *testing.T, h *pluginhost.Host, name string, not int) pluginhost.PluginInfo {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if i := info(t, h, name); i.State == pluginhost.StateRunning && i.PID != not {
			return i
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("plugin %q not running again: %+v", name, info(t, h, name))
	return pluginhost.PluginInfo{}
}

// gone reports whether pid no longer runs (absent, or a zombie nobody reaped).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] == "Z"
}

func waitGone(t *testing.T, pid int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !gone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still running after %v", pid, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// p2cName is the configured name of the p2c example plugin: not "p2c",
// which the bundled balancer holds (a plugin may not shadow it).
const p2cName = "acme.p2c"

func p2cSpec() config.Plugin {
	return config.Plugin{Name: p2cName, Point: "loadbalance", Command: binary("p2c"), Restart: config.RestartAlways}
}

// busyIdle returns two providers: p2c always picks idle; random picks both.
func busyIdle() (busy, idle *spitest.StubInvoker) {
	busy = spitest.NewStubInvoker(spi.MustParse("airnode://127.0.0.1:1/demo.Echo"), nil)
	idle = spitest.NewStubInvoker(spi.MustParse("airnode://127.0.0.2:1/demo.Echo"), nil)
	for range 10 {
		busy.Stats().Begin()
	}
	return busy, idle
}

func TestLoadBalancePluginSelectsAndIsListed(t *testing.T) {
	h, c, err := startHost(t, p2cSpec())
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.LoadBalance.Get(p2cName)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := c.LoadBalance.Origin(p2cName); string(o) != binary("p2c") {
		t.Fatalf("origin %q, want the binary path", o)
	}
	lb, err := b.Build(spi.MustParse("airnode://127.0.0.1/demo.Echo?loadbalance=" + p2cName))
	if err != nil {
		t.Fatal(err)
	}
	busy, idle := busyIdle()
	for range 50 {
		if got := lb.Select([]spi.Invoker{busy, idle}, &spi.Invocation{Method: "Echo"}); got != idle {
			t.Fatalf("picked %v, want idle", got.URL())
		}
	}
	i := info(t, h, p2cName)
	if i.State != pluginhost.StateRunning || i.ProtocolVersion != 1 || i.Path != binary("p2c") || i.PID == 0 ||
		len(i.Provides) != 1 || i.Provides[0] != "p2c" {
		t.Fatalf("info %+v", i)
	}
}

// TestKill9PluginDuringCalls: the host stays up, balancing falls back to the
// default while the plugin is down, and the plugin is back within the backoff.
// At warn, the level call and bench log at, the log shows the plugin's end
// as well as its failure (nu48 F6: they were INFO, so the plugin looked
// down for the rest of the run): "plugin running" with restarted_after
// (WithRecoveryLevel(warn), as call and bench set it; info by default,
// TestRestartCountedAndRecoveryAtInfo) and "plugin balancer answers
// again" with fell_back and after.
func TestKill9PluginDuringCalls(t *testing.T) {
	var logs logbuf.Buffer
	h, c, err := startHostWith(t, []pluginhost.Option{pluginhost.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))),
		pluginhost.WithRecoveryLevel(slog.LevelWarn)}, p2cSpec())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := c.LoadBalance.Get(p2cName)
	lb, err := b.Build(spi.MustParse("airnode://127.0.0.1/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	busy, idle := busyIdle()
	list := []spi.Invoker{busy, idle}
	pid := info(t, h, p2cName).PID
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	sawBusy := false
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		got := lb.Select(list, &spi.Invocation{Method: "Echo"})
		if got == nil {
			t.Fatal("Select returned nil while the plugin was down")
		}
		sawBusy = sawBusy || got == busy // only the fallback picks busy
		if i := info(t, h, p2cName); i.State == pluginhost.StateRunning && i.PID != pid && sawBusy {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if !sawBusy {
		t.Fatal("never fell back to the default balancer while the plugin was down")
	}
	i := waitRunning(t, h, p2cName, pid)
	if i.Restarts < 1 {
		t.Fatalf("restarts %d", i.Restarts)
	}
	t.Logf("plugin back %v after kill -9 (first backoff 50ms)", time.Since(killed).Round(time.Millisecond))
	for range 50 {
		if got := lb.Select(list, &spi.Invocation{Method: "Echo"}); got != idle {
			t.Fatal("plugin balancer not used again after restart")
		}
	}
	for _, re := range []string{
		`level=WARN msg="plugin exited; restarting" component="plugin host" plugin=acme.p2c`,
		`level=WARN msg="plugin balancer unavailable; using the default balancer" component="plugin host" plugin=acme.p2c`,
		`level=WARN msg="plugin running" component="plugin host" plugin=acme.p2c .* restarted_after=\d`,
		`level=WARN msg="plugin balancer answers again; the default balancer picked meanwhile" component="plugin host" plugin=acme.p2c .*fell_back=[1-9]\d* after=\d`,
	} {
		if !regexp.MustCompile(re).MatchString(logs.String()) {
			t.Errorf("log at warn lacks %s:\n%s", re, logs.String())
		}
	}
}

func TestServicePluginKill9FailsFastThenRecovers(t *testing.T) {
	h, _, err := startHost(t, config.Plugin{Name: "greeter", Point: pluginhost.PointService, Command: binary("greeter")})
	if err != nil {
		t.Fatal(err)
	}
	svcs := h.Services()
	if len(svcs) != 1 || svcs[0].Name != "greeter.Greeter" || strings.Join(svcs[0].Methods, ",") != "Hello,Pid" {
		t.Fatalf("services %+v", svcs)
	}
	inv := svcs[0].Invoker(spi.MustParse("airnode://127.0.0.1:20880/greeter.Greeter"))
	ctx := context.Background()
	res := inv.Invoke(ctx, &spi.Invocation{Method: "Hello", Args: []any{"Ann"}})
	if res.Err != nil || res.Value != "Hello, Ann" {
		t.Fatalf("Hello = %v, %v", res.Value, res.Err)
	}
	pid := info(t, h, "greeter").PID
	res = inv.Invoke(ctx, &spi.Invocation{Method: "Pid"})
	if n, _ := res.Value.(int8); res.Err != nil || (res.Value != nil && fmt.Sprint(res.Value) != fmt.Sprint(pid)) {
		t.Fatalf("Pid = %v (%d), %v; want %d", res.Value, n, res.Err, pid)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// While it is down a call fails fast, as not run (SERVICE_NOT_FOUND:
	// a failover takes it to another provider) once the host knows, or
	// its socket refuses; the call the plugin may have got as it died is
	// CHANNEL_INACTIVE "... may have run".
	failedFast, notRun := false, false
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		start := time.Now()
		res := inv.Invoke(ctx, &spi.Invocation{Method: "Hello", Args: []any{"Bo"}})
		if res.Err != nil {
			switch st := spi.StatusOf(res.Err); {
			case st == spi.StatusServiceNotFound && strings.Contains(res.Err.Error(), "did not run"):
				notRun = true
			case st == spi.StatusChannelInactive && strings.Contains(res.Err.Error(), "may have run"):
			default:
				t.Fatalf("while down: %v, want SERVICE_NOT_FOUND (did not run) or CHANNEL_INACTIVE (may have run)", res.Err)
			}
			if time.Since(start) > 2*time.Second {
				t.Fatalf("failure took %v, want fail fast", time.Since(start))
			}
			failedFast = true
		} else if failedFast {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !failedFast || !notRun {
		t.Fatalf("failures while the plugin was down: any %v, as not run %v; want both", failedFast, notRun)
	}
	waitRunning(t, h, "greeter", pid)
	res = inv.Invoke(ctx, &spi.Invocation{Method: "Hello", Args: []any{"Cy"}})
	if res.Err != nil || res.Value != "Hello, Cy" {
		t.Fatalf("after restart: %v, %v", res.Value, res.Err)
	}
}

func TestWrongSHA256IsRefusedOthersStart(t *testing.T) {
	bad := p2cSpec()
	bad.SHA256 = strings.Repeat("ab", 32)
	good := config.Plugin{Name: "greeter", Point: pluginhost.PointService, Command: binary("greeter")}
	h, c, err := startHost(t, bad, good)
	actual := fileSum(t, binary("p2c"))
	t.Log(err)
	if err == nil || !strings.Contains(err.Error(), "expected "+bad.SHA256) || !strings.Contains(err.Error(), "actual "+actual) ||
		!strings.Contains(err.Error(), `"`+p2cName+`"`) {
		t.Fatalf("err = %v; want one naming the plugin, expected and actual checksums", err)
	}
	if i := info(t, h, p2cName); i.State != pluginhost.StateFailed || !strings.Contains(i.Reason, "sha256 mismatch") {
		t.Fatalf("p2c info %+v", i)
	}
	if i := info(t, h, "greeter"); i.State != pluginhost.StateRunning {
		t.Fatalf("greeter info %+v", i)
	}
	// A refused plugin stays in the catalog, so that selecting it says why
	// it is missing.
	b, err := c.LoadBalance.Get(p2cName)
	if err != nil {
		t.Fatalf("a refused plugin is not catalogued: %v", err)
	}
	if _, err := b.Build(spi.MustParse("airnode://127.0.0.1:1/demo.Echo?loadbalance=" + p2cName)); err == nil || !strings.Contains(err.Error(), "sha256 mismatch") {
		t.Fatalf("building a refused plugin: %v; want its sha256 mismatch", err)
	}

	ok := p2cSpec()
	ok.SHA256 = actual
	h2, _, err := startHost(t, ok)
	if err != nil || info(t, h2, p2cName).State != pluginhost.StateRunning {
		t.Fatalf("right sha256: %v", err)
	}
}

func fileSum(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestStdoutBeforeHandshakeIsAClearError(t *testing.T) {
	h, _, err := startHost(t, config.Plugin{Name: "chatty", Point: "loadbalance", Command: binary("junk")}, p2cSpec())
	if err == nil || !strings.Contains(err.Error(), `plugin "chatty"`) || !strings.Contains(err.Error(), "hello from a chatty plugin") ||
		!strings.Contains(err.Error(), "stdout") {
		t.Fatalf("err = %v; want one naming the plugin and its stray output", err)
	}
	t.Log(err)
	if info(t, h, p2cName).State != pluginhost.StateRunning {
		t.Fatal("a broken plugin stopped another from starting")
	}
}

func TestPluginMayNotShadowBundledName(t *testing.T) {
	s := p2cSpec()
	s.Name = "random"
	_, _, err := startHost(t, s)
	if err == nil || !strings.Contains(err.Error(), `may not shadow the bundled loadbalance "random"`) {
		t.Fatalf("err = %v", err)
	}
	t.Log(err)
}

func TestCloseStopsEveryPlugin(t *testing.T) {
	h, _, err := startHost(t, p2cSpec(), config.Plugin{Name: "greeter", Point: pluginhost.PointService, Command: binary("greeter")})
	if err != nil {
		t.Fatal(err)
	}
	pids := []int{info(t, h, p2cName).PID, info(t, h, "greeter").PID}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil { // idempotent
		t.Fatal(err)
	}
	for _, pid := range pids {
		waitGone(t, pid, 5*time.Second)
	}
	if i := info(t, h, p2cName); i.State != pluginhost.StateStopped {
		t.Fatalf("after Close: %+v", i)
	}
}

func TestRestartNeverLeavesPluginFailed(t *testing.T) {
	s := p2cSpec()
	s.Restart = config.RestartNever
	h, c, err := startHost(t, s)
	if err != nil {
		t.Fatal(err)
	}
	pid := info(t, h, p2cName).PID
	_ = syscall.Kill(pid, syscall.SIGKILL)
	deadline := time.Now().Add(10 * time.Second)
	for info(t, h, p2cName).State != pluginhost.StateFailed {
		if time.Now().After(deadline) {
			t.Fatalf("state %+v", info(t, h, p2cName))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r := info(t, h, p2cName).Reason; !strings.Contains(r, "killed") {
		t.Fatalf("reason %q", r)
	}
	// balancing still works, through the default
	b, _ := c.LoadBalance.Get(p2cName)
	lb, _ := b.Build(spi.MustParse("airnode://127.0.0.1/demo.Echo"))
	busy, idle := busyIdle()
	if lb.Select([]spi.Invoker{busy, idle}, &spi.Invocation{}) == nil {
		t.Fatal("nil while the plugin is failed")
	}
}

func TestRegistryPluginSurvivesRestart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "providers.txt")
	p1, p2 := "airnode://127.0.0.1:20880/demo.Echo", "airnode://127.0.0.2:20880/demo.Echo"
	if err := os.WriteFile(file, []byte(p1+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, c, err := startHost(t, config.Plugin{Name: "static", Point: "registry", Command: binary("staticregistry")})
	if err != nil {
		t.Fatal(err)
	}
	rb, err := c.Registry.Get("static")
	if err != nil {
		t.Fatal(err)
	}
	r, err := rb.Build(spi.MustParse("static://" + file + "?interval=20ms"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	lists := make(chan int, 64)
	sub, err := r.Subscribe(ctx, spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer"), func(l []spi.URL) { lists <- len(l) })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	if n := <-lists; n != 1 {
		t.Fatalf("first list has %d providers", n)
	}
	pid := info(t, h, "static").PID
	_ = syscall.Kill(pid, syscall.SIGKILL)
	waitRunning(t, h, "static", pid)
	if err := os.WriteFile(file, []byte(p1+"\n"+p2+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case n := <-lists:
			if n == 0 {
				t.Fatal("an empty list was pushed across the restart")
			}
			if n == 2 {
				return
			}
		case <-ctx.Done():
			t.Fatal("no push after the plugin restarted and the file changed")
		}
	}
}

// TestHostKill9LeavesNoPlugin: plugins never outlive a host killed by
// SIGKILL; they exit by themselves within 3 s.
func TestHostKill9LeavesNoPlugin(t *testing.T) {
	cmd := exec.Command(binary("host"), binary("p2c"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if !testing.Verbose() {
		cmd.Stderr = nil
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("host said %q: %v", line, err)
	}
	var pid int
	if _, err := fmt.Sscanf(line, "pid %d", &pid); err != nil || pid <= 0 {
		t.Fatalf("host said %q", line)
	}
	if gone(pid) {
		t.Fatal("plugin not running")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	waitGone(t, pid, 3*time.Second)
}

func TestProbeDescribesAndStops(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pr, err := pluginhost.NewProbe(ctx, config.Plugin{Command: binary("p2c")})
	if err != nil {
		t.Fatal(err)
	}
	if pr.ProtocolVersion != 1 || len(pr.Provides) != 1 || pr.Provides[0].Point != "loadbalance" || pr.Provides[0].Name != "p2c" {
		t.Fatalf("probe %+v", pr)
	}
	if pr.LoadBalance(nil) == nil || pr.Registry() != nil || pr.Filter() != nil {
		t.Fatal("adapters do not match what the plugin provides")
	}
	pid := pr.PID
	pr.Close()
	waitGone(t, pid, 5*time.Second)

	if _, err := pluginhost.NewProbe(ctx, config.Plugin{Command: binary("junk")}); err == nil || !strings.Contains(err.Error(), "hello from a chatty plugin") {
		t.Fatalf("junk probe: %v", err)
	}
}

// TestC1_PluginNamedWithDotIsOneExtensionName: a plugin named acme.p2c is
// selected by ?loadbalance=acme.p2c like any extension.
func TestC1_PluginNamedWithDotIsOneExtensionName(t *testing.T) {
	s := p2cSpec()
	s.Name = "acme.p2c"
	_, c, err := startHost(t, s)
	if err != nil {
		t.Fatal(err)
	}
	b, sel, err := c.LoadBalance.Select(spi.MustParse("airnode://127.0.0.1/demo.Echo?loadbalance=acme.p2c"), "Echo")
	if err != nil || sel.Name != "acme.p2c" || b.Name() != "acme.p2c" {
		t.Fatalf("select: %v %+v", err, sel)
	}
	if o, _ := c.LoadBalance.Origin("acme.p2c"); string(o) != binary("p2c") {
		t.Fatalf("origin %q", o)
	}
}

func TestStartTimeoutAndInProcessPointsAreRefused(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	h, _, err := startHost(t,
		config.Plugin{Name: "mute", Point: "loadbalance", Command: sleep, Args: []string{"30"}, StartTimeout: 300 * time.Millisecond},
		config.Plugin{Name: "fasttcp", Point: "transport", Command: binary("p2c")},
		config.Plugin{Name: "typo", Point: "loadbalancer", Command: binary("p2c")},
		p2cSpec())
	if err == nil || !strings.Contains(err.Error(), `plugin "mute"`) || !strings.Contains(err.Error(), "no handshake within start_timeout 300ms") {
		t.Fatalf("err = %v; want the mute plugin's start timeout", err)
	}
	if !strings.Contains(err.Error(), `point "transport" cannot be served by a plugin`) {
		t.Fatalf("err = %v; want the transport plugin refused", err)
	}
	if !strings.Contains(err.Error(), `point "loadbalancer" cannot be served by a plugin (allowed: filter, loadbalance, registry, service); transport, codec, heartbeat and cluster stay in process; did you mean "loadbalance"?`) {
		t.Fatalf("err = %v; want the misspelt point refused with a did-you-mean", err)
	}
	t.Log(err)
	if info(t, h, p2cName).State != pluginhost.StateRunning || info(t, h, "mute").State != pluginhost.StateFailed {
		t.Fatalf("plugins %+v", h.Plugins())
	}
}

// TestProtocolVersionNegotiation: a plugin offering versions 1 and 2 is
// spoken to in 1; one offering only 2 is refused with both sides' versions.
func TestProtocolVersionNegotiation(t *testing.T) {
	both := config.Plugin{Name: "both", Point: "loadbalance", Command: binary("versions"), Env: map[string]string{"TEST_PLUGIN_VERSIONS": "2,1"}}
	only2 := config.Plugin{Name: "future", Point: "loadbalance", Command: binary("versions"), Env: map[string]string{"TEST_PLUGIN_VERSIONS": "2"}}
	h, _, err := startHost(t, both, only2)
	if err == nil || !strings.Contains(err.Error(), `plugin "future"`) || !strings.Contains(err.Error(), "protocol version") {
		t.Fatalf("err = %v; want the version-2-only plugin refused", err)
	}
	t.Log(err)
	if i := info(t, h, "both"); i.State != pluginhost.StateRunning || i.ProtocolVersion != 1 {
		t.Fatalf("both: %+v", i)
	}
}

// A binary that exits without a handshake is said to have exited (not to
// have written "" to stdout), and a failed start logs no go-plugin
// "failed to exit gracefully" warning about a process that never ran.
func TestFailedStartMessages(t *testing.T) {
	var logs strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(b []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(b)
	}), &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for cmd, want := range map[string]string{
		"/bin/true":          "exited with status 0 before the handshake, writing nothing on stdout or stderr; is it an airnode plugin (sdk.Serve)?",
		"/nonexistent/probe": "no such file or directory",
	} {
		_, err := pluginhost.NewProbe(ctx, config.Plugin{Command: cmd}, pluginhost.WithLogger(logger))
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), `wrote ""`) {
			t.Errorf("%s: %v, want %q", cmd, err, want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(logs.String(), "failed to exit gracefully") {
		t.Errorf("logs:\n%s", logs.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }
