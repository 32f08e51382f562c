package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
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
	"github.com/airnode/airnode/internal/testaddr"
	"github.com/airnode/airnode/internal/testbin"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// binary is the airnode binary built once for this package's tests;
// greeter the example service plugin (examples/greeter); acmecli the
// whole command line with two in-process extensions (testdata/acmecli).
// The other plugins are built on first need (buildPlugin).
var binary, greeter, acmecli string

func TestMain(m *testing.M) {
	testbin.Main(m, func(dir string) {
		binary = filepath.Join(dir, "airnode")
		greeter = filepath.Join(dir, "greeter")
		acmecli = filepath.Join(dir, "acmecli")
	}, "../cmd/airnode", "../examples/greeter/cmd/greeter", "./testdata/acmecli")
}

// provider is a running `airnode serve` process.
type provider struct {
	cmd  *exec.Cmd
	addr string // "127.0.0.1:port"
	reg  string // file registry URL it registers in

	mu   sync.Mutex
	log  bytes.Buffer
	done chan struct{} // closed when the process has exited and its log is read
	err  error         // Wait's result
}

var servingLine = regexp.MustCompile(`airnode serve: serving" addr=(\S+)`)

// serve starts `airnode serve --listen listen` with a file registry in
// regDir and waits for its "serving" line.
func serve(t *testing.T, listen, regDir string, args ...string) *provider {
	t.Helper()
	return startServe(t, listen, "file://"+regDir, []string{"XDG_RUNTIME_DIR=" + regDir}, "", args...)
}

// startServe runs `airnode serve --listen listen --registry reg args...`
// with env added to the environment (in dir when not empty), waits up to
// 15 s for its "serving" line and kills the process at cleanup, logging
// its output when the test failed.
func startServe(t *testing.T, listen, reg string, env []string, dir string, args ...string) *provider {
	t.Helper()
	return startServeOf(t, binary, listen, reg, env, dir, args...)
}

// startServeOf is startServe running bin's serve (bin: an airnode command
// line such as acmecli).
func startServeOf(t *testing.T, bin, listen, reg string, env []string, dir string, args ...string) *provider {
	t.Helper()
	p, ready := launchServe(t, bin, listen, reg, env, dir, args...)
	select {
	case p.addr = <-ready:
	case <-p.done:
		t.Fatalf("serve exited: %v\n%s", p.err, p.logText())
	case <-time.After(15 * time.Second):
		t.Fatalf("serve not ready after 15s\n%s", p.logText())
	}
	return p
}

// launchServe starts bin's serve as startServeOf does, without waiting:
// ready receives the address of its first "serving" line. The process
// is killed at cleanup.
func launchServe(t *testing.T, bin, listen, reg string, env []string, dir string, args ...string) (*provider, <-chan string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--listen", listen, "--registry", reg}, args...)...)
	cmd.Env = append(hostEnviron(), env...)
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &provider{cmd: cmd, reg: reg, done: make(chan struct{})}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.log.WriteString(line + "\n")
			p.mu.Unlock()
			if m := servingLine.FindStringSubmatch(line); m != nil {
				select {
				case ready <- m[1]:
				default:
				}
			}
		}
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("serve %d log:\n%s", cmd.Process.Pid, p.logText())
		}
	})
	return p, ready
}

func (p *provider) logText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

func (p *provider) url(service string) string { return "airnode://" + p.addr + "/" + service }

// waitServing waits up to 15 s for p's "serving" line of service: serve
// logs one per service it exports, and the helpers return at the first,
// before a plugin's service may be exported (a call then got
// SERVICE_NOT_FOUND under load).
func (p *provider) waitServing(t *testing.T, service string) {
	t.Helper()
	want := `airnode serve: serving"`
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		for _, line := range strings.Split(p.logText(), "\n") {
			if strings.Contains(line, want) && strings.Contains(line, " service="+service+" ") {
				return
			}
		}
	}
	t.Fatalf("serve logged no serving line of %s in 15s; its log:\n%s", service, p.logText())
}

// wait waits for the process to exit and returns its exit code.
func (p *provider) wait(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(within):
		t.Fatalf("serve still running after %v", within)
	}
	return exitCode(t, p.err)
}

// exitCode returns the exit code of a process whose Wait returned err;
// an error other than an exit status fails the test.
func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

type result struct {
	stdout, stderr string
	code           int
	elapsed        time.Duration
}

// call runs `airnode call args...`.
func call(t *testing.T, env []string, args ...string) result {
	t.Helper()
	return runCommand(t, 20*time.Second, env, "call", args...)
}

// runCommand runs `airnode sub args...` with env added to the
// environment, for at most limit, and returns its outputs, exit code and
// wall time, whatever the exit code.
func runCommand(t *testing.T, limit time.Duration, env []string, sub string, args ...string) result {
	t.Helper()
	return runCommandOf(t, binary, limit, env, sub, args...)
}

// runCommandOf is runCommand running bin (an airnode command line such as
// acmecli).
func runCommandOf(t *testing.T, bin string, limit time.Duration, env []string, sub string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{sub}, args...)...)
	cmd.Env = append(hostEnviron(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String(), elapsed: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%s %v: %v", sub, args, err)
	}
	return r
}

func expectOK(t *testing.T, r result, stdout string) {
	t.Helper()
	if r.code != 0 || strings.TrimSpace(r.stdout) != stdout {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit 0 and %s", r.code, r.stdout, r.stderr, stdout)
	}
}

func expectFail(t *testing.T, r result, prefix string, contains ...string) {
	t.Helper()
	expectExit(t, r, 1, prefix, contains...)
}

// expectExit checks that r exited code with nothing on stdout and stderr
// starting prefix and containing each of contains.
func expectExit(t *testing.T, r result, code int, prefix string, contains ...string) {
	t.Helper()
	if r.code != code || !strings.HasPrefix(r.stderr, prefix) || r.stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d and stderr starting %q", r.code, r.stdout, r.stderr, code, prefix)
	}
	for _, c := range contains {
		if !strings.Contains(r.stderr, c) {
			t.Fatalf("stderr %q does not contain %q", r.stderr, c)
		}
	}
}

// expectUsage is expectFail for a usage error: exit 2 (tester nu41).
func expectUsage(t *testing.T, r result, prefix string, contains ...string) {
	t.Helper()
	expectExit(t, r, exitUsage, prefix, contains...)
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// refer returns an in-process reference to u using the bundled extensions.
func refer(t *testing.T, u string) *kernel.Reference {
	t.Helper()
	n := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet))
	t.Cleanup(func() { _ = n.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := n.Refer(ctx, spi.MustParse(u), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The acceptance list of issue 3, against one serve process.
func TestE2E_ServeAndCall(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	echo := p.url("demo.Echo")

	t.Run("Echo", func(t *testing.T) {
		expectOK(t, call(t, nil, echo, "Echo", `"hello"`), `"hello"`)
	})
	t.Run("SleepTimeout", func(t *testing.T) {
		r := call(t, nil, echo, "Sleep", "2000", "--timeout", "500ms")
		expectFail(t, r, "SERVER_TIMEOUT")
		if r.elapsed > 1500*time.Millisecond {
			t.Fatalf("took %v, want about 0.5 s", r.elapsed)
		}
		expectOK(t, call(t, nil, echo, "Echo", "1"), "1")
	})
	t.Run("PayloadLimit", func(t *testing.T) {
		expectFail(t, call(t, nil, echo, "Payload", "10000000"), "", "8 MiB")
		expectOK(t, call(t, nil, echo, "Sleep", "1"), "1")
	})
	t.Run("UnknownService", func(t *testing.T) {
		expectFail(t, call(t, nil, p.url("nope.Svc"), "Echo", "1"), "SERVICE_NOT_FOUND", "nope.Svc")
	})
	t.Run("UnknownMethod", func(t *testing.T) {
		expectFail(t, call(t, nil, echo, "Nope", "1"), "SERVICE_NOT_FOUND", "Nope")
	})
	t.Run("Fail", func(t *testing.T) {
		expectFail(t, call(t, nil, echo, "Fail", `"boom"`), "SERVICE_ERROR: boom")
	})
	t.Run("BadArgument", func(t *testing.T) {
		expectFail(t, call(t, nil, echo, "Sleep", `"x"`), "BAD_REQUEST")
	})
	t.Run("ByServiceKeyThroughRegistry", func(t *testing.T) {
		r := call(t, nil, "--registry", p.reg, "demo.Echo", "Info")
		if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf(`"pid":%d`, p.cmd.Process.Pid)) || !strings.Contains(r.stdout, `"weight":100`) {
			t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("CodecJSON", func(t *testing.T) {
		expectOK(t, call(t, nil, echo, "Echo", `{"a":[1,"x"]}`, "--codec", "json"), `{"a":[1,"x"]}`)
	})
	t.Run("ServeLogsNoPanic", func(t *testing.T) {
		if strings.Contains(p.logText(), "panic") {
			t.Fatalf("serve log mentions a panic:\n%s", p.logText())
		}
	})
}

// A provider on the tcp transport: found through the registry, the
// consumer uses the provider's transport (merged URL); given directly, the
// consumer says which transport to use.
func TestE2E_TCPTransport(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--transport", "tcp")
	expectOK(t, call(t, nil, "--registry", p.reg, "demo.Echo", "Echo", `"via registry"`), `"via registry"`)
	expectOK(t, call(t, nil, p.url("demo.Echo"), "Echo", `"direct"`, "-p", "transport=tcp"), `"direct"`)
}

func TestE2E_ConnectionRefusedFailsFast(t *testing.T) {
	r := call(t, nil, "airnode://127.0.0.1:1/demo.Echo", "Echo", "1")
	expectFail(t, r, "", "127.0.0.1:1")
	if r.elapsed > 3*time.Second {
		t.Fatalf("took %v", r.elapsed)
	}
}

// -p adds parameters to every exported URL; --metrics serves the metrics
// filter's registry.
func TestE2E_ParamsAndMetrics(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "-p", "weight=50", "-p", "warmup=1m", "--metrics", "127.0.0.1:0")
	r := call(t, nil, p.url("demo.Echo"), "Info")
	if r.code != 0 || !strings.Contains(r.stdout, `"weight":50`) {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// published in Dubbo's form: durations as integer ms (tester71)
	if !strings.Contains(p.logText(), "warmup=60000") || !strings.Contains(p.logText(), "weight=50") {
		t.Fatalf("exported URL lacks weight/warmup:\n%s", p.logText())
	}
	m := regexp.MustCompile(`airnode serve: metrics" addr=(\S+)`).FindStringSubmatch(p.logText())
	if m == nil {
		t.Fatal("no metrics address in the log")
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://" + m[1] + "/stats?format=text")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !regexp.MustCompile(`provider\s+demo.Echo\s+Info\s+1\s`).Match(body) {
		t.Fatalf("/stats:\n%s", body)
	}
}

// Random bytes on a raw socket close that connection only; calls from
// other clients go on.
func TestE2E_RandomBytesDoNotDisturbOthers(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	ref := refer(t, p.url("demo.Echo")+"?timeout=5s")
	ctx := context.Background()
	if _, err := ref.Invoke(ctx, "Echo", "warm"); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if v, err := ref.Invoke(ctx, "Echo", int64(i)); err != nil || !same(v, i) {
				errs <- fmt.Errorf("call %d: %v, %v", i, v, err)
				return
			}
		}
	}()
	for range 20 {
		c, err := net.Dial("tcp", p.addr)
		if err != nil {
			t.Fatal(err)
		}
		junk := make([]byte, 1+rand.IntN(4096))
		for i := range junk {
			junk[i] = byte(rand.IntN(256))
		}
		_, _ = c.Write(junk)
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, _ = io.Copy(io.Discard, c) // the server closes it
		c.Close()
	}
	close(stop)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	expectOK(t, call(t, nil, p.url("demo.Echo"), "Echo", `"still"`), `"still"`)
}

// 10,000 concurrent calls from one consumer over one connection.
func TestE2E_TenThousandConcurrentCalls(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	ref := refer(t, p.url("demo.Echo")+"?timeout=30s")
	const n = 10_000
	var wg sync.WaitGroup
	var failed sync.Map
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := ref.Invoke(context.Background(), "Echo", int64(i))
			if err != nil || !same(v, i) {
				failed.Store(i, fmt.Sprintf("%v, %v", v, err))
			}
		}()
	}
	wg.Wait()
	nf := 0
	failed.Range(func(k, v any) bool {
		if nf == 0 {
			t.Errorf("call %v: %v", k, v)
		}
		nf++
		return true
	})
	if nf > 0 {
		t.Fatalf("%d of %d calls failed", nf, n)
	}
	if provs := ref.Providers(); len(provs) != 1 || provs[0].Stats().Active() != 0 || provs[0].Stats().Total() != n {
		t.Fatalf("providers %d, stats %+v", len(provs), provs[0].Stats())
	}
}

// SIGINT while 100 Sleep 500 calls are in flight: all complete, exit 0.
func TestE2E_SIGINTDrainsInFlightCalls(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--shutdown-wait", "100ms")
	ref := refer(t, p.url("demo.Echo")+"?timeout=10s")
	if _, err := ref.Invoke(context.Background(), "Echo", 0); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v, err := ref.Invoke(context.Background(), "Sleep", 500); err != nil || !same(v, 500) {
				errs <- fmt.Errorf("Sleep 500 = %v, %v", v, err)
			}
		}()
	}
	inv := ref.Providers()[0]
	waitFor(t, "100 calls in flight", func() bool { return inv.Stats().Active() == 100 })
	time.Sleep(100 * time.Millisecond) // and written to the wire
	start := time.Now()
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if code := p.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	t.Logf("serve exited 0 %v after SIGINT", time.Since(start))
	for _, s := range []string{"unregistered", "stopped"} {
		if !strings.Contains(p.logText(), s) {
			t.Fatalf("serve log lacks %q", s)
		}
	}
}

// H3: the provider is killed and restarted on the same port 2 s later (the
// scenario says 10 s), with no calls in between: the consumer has
// reconnected by itself when the next call comes.
func TestH3_ConsumerReconnectsToRestartedProvider(t *testing.T) {
	dir := t.TempDir()
	p := serve(t, testaddr.Reserved(t), dir) // held to the end: restarted on it
	ref := refer(t, p.url("demo.Echo")+"?reconnect.backoff=50ms")
	if _, err := ref.Invoke(context.Background(), "Echo", 1); err != nil {
		t.Fatal(err)
	}
	inv := ref.Providers()[0]
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	p.wait(t, 5*time.Second)
	waitFor(t, "provider marked unavailable", func() bool { return !inv.Available() })
	time.Sleep(2 * time.Second)
	p2 := serve(t, p.addr, dir)
	waitFor(t, "reconnected without any call", inv.Available)
	var info map[string]any
	if err := ref.Call(context.Background(), "Info", nil, &info); err != nil {
		t.Fatal(err)
	}
	if !same(info["pid"], p2.cmd.Process.Pid) {
		t.Fatalf("Info = %v, want pid %d", info, p2.cmd.Process.Pid)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitWithin(t, what, 10*time.Second, cond)
}

// waitWithin polls cond every 10 ms and fails the test, naming what it
// waited for, unless cond holds within the given time.
func waitWithin(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// same compares a generic decoded number with want (codecs pick the
// smallest integer type).
func same(v any, want int) bool { return fmt.Sprint(v) == fmt.Sprint(want) }

// H2: the provider is stopped with SIGSTOP (its kernel still accepts TCP):
// with heartbeat=idle, interval 1s, retries 3 the consumer drops it within
// interval × (retries + 1) + 1 s, does not pick it while it is hung (a
// redial alone proves nothing: the first ping must be answered), and picks
// it again after SIGCONT.
func TestH2_HungProviderDroppedAndPickedAgain(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	ref := refer(t, p.url("demo.Echo")+"?heartbeat=idle&heartbeat.interval=1s&heartbeat.retries=3&connect.timeout=1s&reconnect.backoff=100ms&timeout=500ms")
	if _, err := ref.Invoke(context.Background(), "Echo", 1); err != nil {
		t.Fatal(err)
	}
	inv := ref.Providers()[0]
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	t.Cleanup(func() { _ = p.cmd.Process.Signal(syscall.SIGCONT) })
	for inv.Available() {
		if time.Since(stopped) > 6*time.Second {
			t.Fatalf("hung provider still available after %v", time.Since(stopped))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("hung provider dropped after %v", time.Since(stopped).Round(10*time.Millisecond))
	// While it stays hung, redials reach its kernel but not the process.
	time.Sleep(1500 * time.Millisecond)
	if inv.Available() {
		t.Fatal("hung provider available again without answering a ping")
	}
	start := time.Now()
	if _, err := ref.Invoke(context.Background(), "Echo", 1); err == nil || time.Since(start) > time.Second {
		t.Fatalf("call to a hung provider: %v after %v, want a fast failure", err, time.Since(start))
	}
	if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	resumed := time.Now()
	waitFor(t, "provider picked again after SIGCONT", inv.Available)
	t.Logf("picked again %v after SIGCONT", time.Since(resumed).Round(10*time.Millisecond))
	if v, err := ref.Invoke(context.Background(), "Echo", "back"); err != nil || v != "back" {
		t.Fatalf("Echo after SIGCONT = %v, %v", v, err)
	}
}

// A service plugin declared in the config is launched by serve, its
// services exported and registered like demo.Echo.
func TestE2E_ServicePlugin(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "plugins.yaml")
	yaml := "plugins:\n  - {name: greeter, point: service, command: " + greeter + "}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	p := serve(t, "127.0.0.1:0", dir, "--config", cfg)
	expectOK(t, call(t, nil, "--registry", p.reg, "greeter.Greeter", "Hello", `"Ann"`), `"Hello, Ann"`)
	expectOK(t, call(t, nil, p.url("greeter.Greeter"), "Hello", `"Bob"`), `"Hello, Bob"`)
	expectFail(t, call(t, nil, p.url("greeter.Greeter"), "Nope"), "SERVICE_NOT_FOUND", "Nope")
	expectOK(t, call(t, nil, p.url("demo.Echo"), "Echo", "1"), "1")
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 20*time.Second); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
}
