package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/kernel/extension/extensiontest"
)

// Tester19 finding 6: the command line is package cli, and a program's
// in-process extensions (WithExtensions) are in every catalogs it builds.

// acmeOrigin is what the tests' in-process extensions name as their
// origin, as a third party names its Go package.
const acmeOrigin = extension.Origin("github.com/acme/airnode-ext")

// withAcme registers the balancer "acme.first" and the codec "acme.json"
// (wire id 20), stand-ins that are only listed and explained.
func withAcme() Option {
	return WithExtensions(func(cat *extension.Catalogs) error {
		if err := cat.LoadBalance.Register(&extensiontest.LoadBalance{Ext: extensiontest.Ext{ExtName: "acme.first"}}, acmeOrigin); err != nil {
			return err
		}
		return cat.Codec.Register(&extensiontest.Codec{ExtName: "acme.json", CodecID: 20}, acmeOrigin)
	})
}

// runCLI is Run in this process with a missing --config (so no
// ./plugins.yaml is read) unless args give one.
func runCLI(t *testing.T, args []string, opts ...Option) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := Run(ctx, args, &stdout, &stderr, opts...)
	return code, stdout.String(), stderr.String()
}

// Run with WithExtensions lists the extensions with their origin, after
// the bundled ones, and explains a URL selecting them; without it they
// are unknown.
func TestT19_6_RunWithExtensionsListsAndExplains(t *testing.T) {
	code, out, errOut := runCLI(t, []string{"list"}, withAcme())
	if code != 0 {
		t.Fatalf("list: exit %d, stderr %q", code, errOut)
	}
	for _, r := range [][]string{ // sorted by name: acme.* open their points
		{"loadbalance", "loadbalance", "random", "acme.first", string(acmeOrigin)},
		{"codec", "codec", "msgpack", "acme.json", string(acmeOrigin), "wire id 20"},
		{"random", "bundled", "default"},
	} {
		if !row(r...).MatchString(out) {
			t.Errorf("list lacks the row %q:\n%s", r, out)
		}
	}

	code, out, errOut = runCLI(t, []string{"list", "--explain", "airnode://127.0.0.1:20880/demo.Echo?loadbalance=acme.first&methods.Echo.codec=acme.json"}, withAcme())
	if code != 0 {
		t.Fatalf("list --explain: exit %d, stderr %q", code, errOut)
	}
	for _, r := range [][]string{
		{"loadbalance", "service", "acme.first", string(acmeOrigin), "service-level key loadbalance=acme.first"},
		{"codec", "method Echo", "acme.json", string(acmeOrigin), "method-level key methods.Echo.codec=acme.json"},
	} {
		if !row(r...).MatchString(out) {
			t.Errorf("list --explain lacks the row %q:\n%s", r, out)
		}
	}

	code, out, errOut = runCLI(t, []string{"list", "--explain", "airnode://127.0.0.1:20880/demo.Echo?loadbalance=acme.first"})
	if code == 0 && !strings.Contains(out+errOut, `"acme.first"`) || strings.Contains(out, string(acmeOrigin)) {
		t.Errorf("without WithExtensions, acme.first was not reported unknown: exit %d\n%s\n%s", code, out, errOut)
	}
}

// A WithExtensions function's error fails every command that builds
// catalogs, once, prefixed "extensions:"; a name the bundle has is such
// an error, naming the origin that has it. Functions run in the order
// given, after the bundle.
func TestT19_6_WithExtensionsErrors(t *testing.T) {
	clash := WithExtensions(func(cat *extension.Catalogs) error {
		return cat.LoadBalance.Register(&extensiontest.LoadBalance{Ext: extensiontest.Ext{ExtName: "random"}}, acmeOrigin)
	})
	code, out, errOut := runCLI(t, []string{"list"}, clash)
	if want := "airnode: extensions: loadbalance: extension \"random\" already registered (bundled)\n"; code != 1 || errOut != want || out != "" {
		t.Errorf("list: exit %d, stdout %q, stderr %q; want exit 1 and %q", code, out, errOut, want)
	}

	var order []string
	step := func(name string, err error) Option {
		return WithExtensions(func(cat *extension.Catalogs) error {
			if _, ok := cat.LoadBalance.Origin("random"); !ok {
				t.Errorf("%s ran before the bundle registered", name)
			}
			order = append(order, name)
			return err
		})
	}
	code, _, errOut = runCLI(t, []string{"registry", "ls", "--registry", "file://" + t.TempDir()}, step("one", nil), step("two", errors.New("acme: no licence")), step("three", nil))
	if code != 1 || errOut != "airnode: extensions: acme: no licence\n" || strings.Join(order, ",") != "one,two" {
		t.Errorf("registry: exit %d, stderr %q, ran %v; want exit 1, the second's error, and one,two", code, errOut, order)
	}
}

// An out-of-process plugin of plugins.yaml joins the catalogs after the
// in-process extensions: a plugin named as one of them is refused,
// naming the in-process origin.
func TestT19_6_PluginNamedAsAnInProcessExtensionIsRefused(t *testing.T) {
	p2c := buildPlugin(t, "github.com/airnode/airnode/examples/p2c/cmd/p2c")
	cfg := writeConfig(t, "plugins:\n  - {name: acme.first, point: loadbalance, command: "+p2c+"}\n")
	code, out, errOut := runCLI(t, []string{"--config", cfg, "list"}, withAcme())
	if code != 1 || !strings.Contains(errOut, `"acme.first"`) || !strings.Contains(errOut, string(acmeOrigin)) {
		t.Errorf("list: exit %d; want 1 and an error naming acme.first and %s\nstdout:\n%s\nstderr:\n%s", code, acmeOrigin, out, errOut)
	}
	if code, _, errOut := runCLI(t, []string{"--config", cfg, "list"}); code != 0 {
		t.Errorf("without WithExtensions the same plugins.yaml fails list: exit %d, stderr %q", code, errOut)
	}
}

// The acceptance with real processes: acmecli (testdata/acmecli,
// the README's ten-line main with a real balancer "acme.first" and codec
// "acme.json") lists and explains them, serves, and its call and bench
// use them against its serve; the plain airnode binary knows neither.
func TestT19_6_AcmeCLIServeCallBench(t *testing.T) {
	const origin = "github.com/airnode/airnode/cli/testdata/acmecli"
	r := runCommandOf(t, acmecli, 20*time.Second, nil, "list", "loadbalance", "acme.first")
	if r.code != 0 || !row("loadbalance", "acme.first", "-", "declares no URL keys").MatchString(r.stdout) {
		t.Errorf("acmecli list loadbalance acme.first: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	dir := t.TempDir()
	p := startServeOf(t, acmecli, "127.0.0.1:0", "file://"+dir, []string{"XDG_RUNTIME_DIR=" + dir}, "")
	target := p.url("demo.Echo") + "?loadbalance=acme.first&codec=acme.json"

	r = runCommandOf(t, acmecli, 20*time.Second, nil, "list", "--explain", target)
	if r.code != 0 || !row("loadbalance", "service", "acme.first", origin, "service-level key loadbalance=acme.first").MatchString(r.stdout) ||
		!row("codec", "service", "acme.json", origin, "service-level key codec=acme.json").MatchString(r.stdout) {
		t.Errorf("acmecli list --explain: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	r = runCommandOf(t, acmecli, 20*time.Second, nil, "call", target, "Echo", `"hi"`)
	if r.code != 0 || strings.TrimSpace(r.stdout) != `"hi"` || !strings.Contains(r.stderr, "acme.first: picked "+p.addr) {
		t.Fatalf("acmecli call: exit %d, stdout %q, stderr %q; want \"hi\" and acme.first's pick of %s", r.code, r.stdout, r.stderr, p.addr)
	}
	waitFor(t, "serve's acme.json decoding", func() bool { return strings.Contains(p.logText(), "acme.json: decoding") })

	r = runCommandOf(t, acmecli, 30*time.Second, nil, "bench", target, "-n", "200", "-c", "2", "--warmup", "0", "--json")
	var rep struct{ Calls, OK int64 }
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 0 || rep.Calls != 200 || rep.OK != 200 || !strings.Contains(r.stderr, "acme.first: picked "+p.addr) {
		t.Errorf("acmecli bench: exit %d, %v, report %+v\nstdout %s\nstderr %s", r.code, err, rep, r.stdout, r.stderr)
	}

	r = runCommandOf(t, binary, 20*time.Second, nil, "call", target, "Echo", `"hi"`)
	if r.code != exitUsage || !strings.Contains(r.stderr, `"acme.`) { // SERVICE_URL's value: a usage error (fix-bs)
		t.Errorf("airnode call with acmecli's extensions: exit %d, stderr %q; want 2 naming the unknown extension", r.code, r.stderr)
	}
}
