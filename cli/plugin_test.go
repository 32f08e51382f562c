package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/pluginhost"
)

// pluginPkgs are the plugins this package's tests run, besides the
// greeter TestMain builds. buildPlugin builds them all on first need.
var pluginPkgs = []string{
	"github.com/airnode/airnode/cli/testdata/badmethods",
	"github.com/airnode/airnode/cli/testdata/echoplugin",
	"github.com/airnode/airnode/cli/testdata/filterplugin",
	"github.com/airnode/airnode/cli/testdata/hangplugin",
	"github.com/airnode/airnode/cli/testdata/keyslb",
	"github.com/airnode/airnode/cli/testdata/nilplugin",
	"github.com/airnode/airnode/cli/testdata/noctxplugin",
	"github.com/airnode/airnode/examples/p2c/cmd/p2c",
	"github.com/airnode/airnode/examples/staticregistry/cmd/staticregistry",
	"github.com/airnode/airnode/examples/tenant/cmd/tenant",
	"github.com/airnode/airnode/kernel/pluginhost/testdata/plug3a",
	"github.com/airnode/airnode/sdk/pluginrpc/testdata/acmeplug",
	"github.com/airnode/airnode/sdk/pluginrpc/testdata/moody",
}

var (
	pluginsOnce sync.Once
	pluginsDir  string // DIR/plugins, DIR being TestMain's (removed by it)
	pluginsErr  error
)

// buildPlugin returns the binary of pkg, one of pluginPkgs. The first
// call builds all of them with one `go build -o DIR/plugins/` (one
// package load, links in parallel: 25-27 s against 34-38 s one package
// at a time on the 2-vCPU CI machine under load); later calls, and
// calls waiting for that build, share its result.
func buildPlugin(t *testing.T, pkg string) string {
	t.Helper()
	if !slices.Contains(pluginPkgs, pkg) {
		t.Fatalf("buildPlugin: %s is not in pluginPkgs", pkg)
	}
	pluginsOnce.Do(func() {
		pluginsDir = filepath.Join(filepath.Dir(binary), "plugins")
		args := append([]string{"build", "-o", pluginsDir + string(filepath.Separator)}, pluginPkgs...)
		if b, err := exec.Command("go", args...).CombinedOutput(); err != nil {
			pluginsErr = fmt.Errorf("go build plugins: %v\n%s", err, b)
		}
	})
	if pluginsErr != nil {
		t.Fatal(pluginsErr)
	}
	return filepath.Join(pluginsDir, path.Base(pkg))
}

func TestPluginCheckRunsConformance(t *testing.T) {
	p2c := buildPlugin(t, "github.com/airnode/airnode/examples/p2c/cmd/p2c")
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(binary, "plugin", "check", p2c)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("plugin check: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"binary    " + p2c, "protocol  1", "provides  loadbalance  p2c",
		"--- PASS: Conformance/loadbalance ", "result       ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	stdout.Reset()
	stderr.Reset()
	cmd = exec.Command(binary, "plugin", "check", p2c, "--sha256", strings.Repeat("0", 64))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err == nil || !strings.Contains(stderr.String(), "expected "+strings.Repeat("0", 64)+", actual ") {
		t.Fatalf("wrong sha256: %v\n%s", err, stderr.String())
	}
}

// tester73 #1: plugin check runs the filter suite (spitest.TestFilter)
// against a filter plugin's real process, on both sides it is active
// on. A filter that calls next and returns its result passes; one that
// drops next's result, or panics, fails the check naming the failed
// subtest; one that sets an attachment passes once
// --filter-adds-attachment names it.
func TestPluginCheckRunsTheFilterSuite(t *testing.T) {
	fp := buildPlugin(t, "github.com/airnode/airnode/cli/testdata/filterplugin")
	check := func(args ...string) (int, string, string) {
		r := runCommand(t, 120*time.Second, nil, "plugin", append([]string{"check", fp}, args...)...)
		return r.code, r.stdout, r.stderr
	}
	code, out, errOut := check()
	for _, want := range []string{"provides  filter  passfilter", "conformance  filter", "--- PASS: Conformance/filter ",
		"--- PASS: Conformance/filter/consumer/PassThrough ", "--- PASS: Conformance/filter/provider/Concurrent ", "result       ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("a filter passing calls through: output lacks %q:\n%s\n%s", want, out, errOut)
		}
	}
	if code != 0 {
		t.Errorf("a filter passing calls through: exit %d, want 0\n%s", code, errOut)
	}

	for _, tc := range []struct {
		mode string
		want []string
	}{
		{"drop", []string{"--- FAIL: Conformance/filter/consumer/PassThrough ", "want next's result unchanged"}},
		{"panic", []string{"--- FAIL: Conformance/filter/consumer/PassThrough ", "filterplugin: asked to panic"}},
		{"tag", []string{"--- FAIL: Conformance/filter/consumer/PassThrough ", "want it unchanged"}},
	} {
		code, out, errOut := check("--arg", tc.mode)
		for _, want := range tc.want {
			if !strings.Contains(out, want) {
				t.Errorf("%s: output lacks %q:\n%s", tc.mode, want, out)
			}
		}
		if code == 0 || strings.Contains(out, "result       ok") || !strings.Contains(errOut, "plugin check: conformance failed") {
			t.Errorf("%s: exit %d; want the check failed\nstdout:\n%s\nstderr:\n%s", tc.mode, code, out, errOut)
		}
	}

	if code, out, errOut := check("--arg", "tag", "--filter-adds-attachment", "x-tag"); code != 0 || !strings.Contains(out, "--- PASS: Conformance/filter ") {
		t.Errorf("tag with --filter-adds-attachment x-tag: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, _, errOut := check("--filter-param", "novalue"); code == 0 || !strings.Contains(errOut, `--filter-param "novalue": want KEY=VALUE`) {
		t.Errorf("--filter-param without =: exit %d\n%s", code, errOut)
	}

	// A filter activated by a URL key (the tenant example's tenant=) is
	// built by the kernel only from URLs with it: without --filter-param
	// giving it the suite is not run, and the check says how to run it.
	tenant := buildPlugin(t, "github.com/airnode/airnode/examples/tenant/cmd/tenant")
	r := runCommand(t, 120*time.Second, nil, "plugin", "check", tenant)
	if want := `note      filter suite not run: filter "tenant" is active only on URLs with key "tenant", which it is built from; give --filter-param tenant=VALUE`; r.code != 0 || !strings.Contains(r.stdout, want) || strings.Contains(r.stdout, "=== RUN") {
		t.Errorf("tenant: exit %d; want 0 and %q, no suite run\n%s\n%s", r.code, want, r.stdout, r.stderr)
	}
}

func TestPrintPlugins(t *testing.T) {
	var b bytes.Buffer
	printPlugins(&b, []pluginhost.PluginInfo{
		{Name: "p2c", Point: "loadbalance", Path: "/opt/p2c", ProtocolVersion: 1, Provides: []string{"p2c"}, State: pluginhost.StateRunning},
		{Name: "bad", Point: "loadbalance", Path: "/opt/bad", State: pluginhost.StateFailed, Reason: "sha256 mismatch"},
	})
	out := b.String()
	for _, want := range []string{"PLUGIN", "/opt/p2c", "running", "failed: sha256 mismatch"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

var pluginPID = regexp.MustCompile(`plugin running" component="plugin host" plugin=(\S+) .*pid=(\d+)`)

// The first and fourth acceptance items with the real binary: the
// example balancer declared in plugins.yaml, `airnode serve`, then
// `airnode call '...?loadbalance=acme.p2c' Echo 1`; then kill -9 of the host
// leaves no plugin process after 3 s.
func TestPluginBalancerServeCallAndHostKill9(t *testing.T) {
	p2c := buildPlugin(t, "github.com/airnode/airnode/examples/p2c/cmd/p2c")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "plugins.yaml")
	yaml := "plugins:\n  - {name: acme.p2c, point: loadbalance, command: " + p2c + ", restart: always}\n" // p2c is bundled
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	p := serve(t, "127.0.0.1:0", dir, "--config", cfg)
	m := pluginPID.FindStringSubmatch(p.logText())
	if m == nil || m[1] != "acme.p2c" {
		t.Fatalf("serve did not start the plugin:\n%s", p.logText())
	}
	pid, _ := strconv.Atoi(m[2])

	var stdout, stderr bytes.Buffer
	call := exec.Command(binary, "call", "--config", cfg, p.url("demo.Echo")+"?loadbalance=acme.p2c", "Echo", "1")
	call.Stdout, call.Stderr = &stdout, &stderr
	if err := call.Run(); err != nil || strings.TrimSpace(stdout.String()) != "1" {
		t.Fatalf("call: %v, stdout %q, stderr %q", err, stdout.String(), stderr.String())
	}

	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
	deadline := time.Now().Add(3 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("plugin %d still running 3s after the host was killed", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// processGone reports whether pid is not running (absent or a zombie).
func processGone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] == "Z"
}

// The second acceptance item: `airnode serve` with the greeter
// service plugin declared in plugins.yaml, and
// `airnode call .../greeter.Greeter Hello '"Ann"'` answers from the plugin
// process.
func TestGreeterServicePluginAnswersCall(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "plugins.yaml")
	yaml := "plugins:\n  - {name: greeter, point: service, command: " + greeter + "}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	p := serve(t, "127.0.0.1:0", dir, "--config", cfg)
	m := pluginPID.FindStringSubmatch(p.logText())
	if m == nil || m[1] != "greeter" {
		t.Fatalf("serve did not start the plugin:\n%s", p.logText())
	}
	var stdout, stderr bytes.Buffer
	call := exec.Command(binary, "call", p.url("greeter.Greeter"), "Hello", `"Ann"`)
	call.Stdout, call.Stderr = &stdout, &stderr
	if err := call.Run(); err != nil || strings.TrimSpace(stdout.String()) != `"Hello, Ann"` {
		t.Fatalf("call: %v, stdout %q, stderr %q\n%s", err, stdout.String(), stderr.String(), p.logText())
	}
	stdout.Reset()
	call = exec.Command(binary, "call", p.url("greeter.Greeter"), "Pid")
	call.Stdout, call.Stderr = &stdout, &stderr
	if err := call.Run(); err != nil || strings.TrimSpace(stdout.String()) != m[2] {
		t.Fatalf("Pid: %v, stdout %q; want the plugin's pid %s", err, stdout.String(), m[2])
	}
}

// The help's second example: a read-only registry plugin passes the
// read-only subset of the registry suite (spitest.TestReadOnlyRegistry
// without publish) rather than failing on Register.
func TestPluginCheckReadOnlyRegistryRunsTheReadOnlySubset(t *testing.T) {
	static := buildPlugin(t, "github.com/airnode/airnode/examples/staticregistry/cmd/staticregistry")
	providers := filepath.Join(t.TempDir(), "providers.txt")
	if err := os.WriteFile(providers, []byte("airnode://127.0.0.1:20001/demo.Echo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(binary, "plugin", "check", static, "--registry-url", "static://"+providers)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("plugin check: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"--- PASS: Conformance/registry ", "is read-only", "--- PASS: Conformance/registry/RegisterNotSupported ",
		"--- PASS: Conformance/registry/UnknownServiceIsEmpty ", "--- PASS: Conformance/registry/Lifecycle ", "result       ok",
		"keys      interval (duration, default 500ms): how often the file is re-read, 10ms..1h"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "FAIL") {
		t.Errorf("output has FAIL:\n%s", out)
	}

	// Without --registry-url the suite cannot build the registry: say so.
	stdout.Reset()
	cmd = exec.Command(binary, "plugin", "check", static)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || !strings.Contains(stdout.String(), "--registry-url URL") {
		t.Errorf("plugin check without --registry-url: %v\n%s", err, stdout.String())
	}
}

// plugin check with a real balancer plugin declaring URL keys the kernel
// reads: a key that chooses an extension (loadbalance) or a kernel key
// with another type than the kernel's (timeout as int) fails the check,
// naming the key and that the kernel reads it; a kernel key declared with
// the kernel's type (weight, as shortestresponse reads it) or one the
// kernel has no type for (group) is only noted, and the check passes.
func TestPluginCheckKernelKeys(t *testing.T) {
	lb := buildPlugin(t, "github.com/airnode/airnode/cli/testdata/keyslb")
	run := func(args ...string) (int, string, string) {
		r := runCommand(t, 60*time.Second, nil, "plugin", append([]string{"check", lb}, args...)...)
		return r.code, r.stdout, r.stderr
	}
	code, out, errOut := run("--arg", "timeout:int:5", "--arg", "loadbalance:string:x", "--arg", "keyslb.window:duration:1s")
	for _, want := range []string{
		`airnode: plugin check: loadbalance "keyslb" declares URL key "timeout" as int, but the kernel reads "timeout" itself (type duration: consumer call timeout, default 1s)`,
		`declare a key of the plugin's own, such as "keyslb.timeout"`,
		`loadbalance "keyslb" declares URL key "loadbalance", which the kernel reads to choose the loadbalance extension`,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if code != 1 || strings.Contains(errOut, "keyslb.window") || strings.Contains(out, "result       ok") {
		t.Errorf("exit %d; want 1 and only the clashing keys named\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	code, out, errOut = run("--arg", "weight:int:100", "--arg", "group:string:g")
	for _, want := range []string{
		`note      key "weight" of loadbalance "keyslb" is a kernel key: the kernel reads it too (type int: provider weight); a URL's weight= reaches both`,
		`note      key "group" of loadbalance "keyslb" is a kernel key: the kernel reads it too; a URL's group= reaches both`,
		"result       ok",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if code != 0 {
		t.Errorf("exit %d, stderr %q; want 0", code, errOut)
	}
}

// A service plugin method without a leading context.Context
// (testdata/noctxplugin's Count): the sdk calls it, but it cannot see the
// call's deadline, cancellation or attachments, so plugin check warns,
// naming the method, and passes. The greeter example, which users copy,
// takes a context in every method and draws no warning (tester37 F14).
func TestPluginCheckWarnsAboutMethodsWithoutContext(t *testing.T) {
	noctx := buildPlugin(t, "github.com/airnode/airnode/cli/testdata/noctxplugin")
	check := func(plugin string) string {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(binary, "plugin", "check", plugin)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("plugin check %s: %v\n%s\n%s", plugin, err, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	out := check(noctx)
	want := "warning   noctx.Svc.Count takes no context.Context first: it cannot see the call's deadline, its cancellation or its attachments"
	if !strings.Contains(out, want) || strings.Contains(out, "Svc.Hello takes") {
		t.Errorf("output lacks %q or warns about Hello:\n%s", want, out)
	}
	if out := check(greeter); strings.Contains(out, "warning") || !strings.Contains(out, "provides  service  greeter.Greeter (Hello, Pid)") {
		t.Errorf("the greeter example draws a warning or fails:\n%s", out)
	}
}
