package pluginrpc_test

import (
	"context"
	"io"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/kernel/pluginhost"
	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
)

// hostAcme builds testdata/acmeplug and hosts it as filter "acme.authz"
// and registry "acme.dirreg" (read-only: R_MODE=readonly), registered in
// catalogs holding the bundled extensions; all ends with the test.
// acmeNodes hosts the acme plugin (hostAcme) and returns a provider and
// a consumer node on its catalogs, closed at cleanup, and a context of
// 30 s.
func acmeNodes(t *testing.T) (ctx context.Context, provider, consumer *kernel.Node) {
	t.Helper()
	cat := hostAcme(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	provider = kernel.NewNode(cat, kernel.WithLogger(quiet), kernel.WithShutdownWait(0))
	t.Cleanup(func() { _ = provider.Close() })
	consumer = kernel.NewNode(cat, kernel.WithLogger(quiet))
	t.Cleanup(func() { _ = consumer.Close() })
	return ctx, provider, consumer
}

func hostAcme(t *testing.T) *extension.Catalogs {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "acmeplug")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/acmeplug").CombinedOutput(); err != nil {
		t.Fatalf("building the test plugin: %v\n%s", err, out)
	}
	h := pluginhost.New([]config.Plugin{
		{Name: "acme.authz", Point: "filter", Command: bin},
		{Name: "acme.dirreg", Point: "registry", Command: bin, Env: map[string]string{"R_MODE": "readonly"}},
	}, pluginhost.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(func() { _ = h.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	cat := bundle.Catalogs()
	if err := h.Register(cat); err != nil {
		t.Fatal(err)
	}
	return cat
}

// Tester9 #2, from Go: a filter plugin's Build runs in the plugin when
// the kernel builds the chain, before Export listens and when Refer
// builds the reference: a URL the plugin refuses fails them with the
// plugin's error, naming the service and the filter; a Build that never
// returns fails them after the bound (3 s), saying so. A good URL exports,
// and the plugin filters calls.
func TestFilterPluginBuildFailsExportAndRefer(t *testing.T) {
	ctx, p, c := acmeNodes(t)

	bad := `filter "acme.authz": invalid value "abc" for URL key "authz.rate": want an integer`
	_, err := p.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?authz.key=k&authz.rate=abc"))
	if err == nil || err.Error() != "kernel: export demo.Echo: "+bad {
		t.Errorf("Export with authz.rate=abc: %v; want %q", err, "kernel: export demo.Echo: "+bad)
	}
	_, err = c.Refer(ctx, spi.MustParse("airnode://127.0.0.1:1/demo.Echo?filter=acme.authz&authz.rate=abc"), spi.URL{})
	if err == nil || err.Error() != "kernel: refer demo.Echo: "+bad {
		t.Errorf("Refer with authz.rate=abc: %v; want %q", err, "kernel: refer demo.Echo: "+bad)
	}

	e, err := p.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?group=ok&authz.key=k&authz.rate=5"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Refer(ctx, spi.MustParse("airnode://"+e.URL().Address()+"/ok/demo.Echo"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	var got string
	if err := r.Call(ctx, "Echo", []any{"x"}, &got); spi.StatusOf(err) != spi.StatusBadRequest || !strings.Contains(err.Error(), "acme.authz: bad x-auth") {
		t.Errorf("call without x-auth: %v; want BAD_REQUEST from the filter", err)
	}
	if err := r.Call(spi.WithAttachments(ctx, "x-auth", "k"), "Echo", []any{"x"}, &got); err != nil || got != "x" {
		t.Errorf("call with x-auth: %q, %v", got, err)
	}
}

// Leftover of tester9 #2: a filter plugin's Build that hangs for one URL
// fails that Export after the bound (3 s), and holds up only later Builds
// of that URL: the plugin builds other URLs concurrently, so an Export and
// a Refer with another URL, after the hung one and while it still hangs in
// the plugin, build their filter and the calls pass it (before, the plugin
// serialised all its Builds and these failed after 3 s each too).
func TestHungFilterBuildHoldsUpOnlyItsURL(t *testing.T) {
	ctx, p, c := acmeNodes(t)

	start := time.Now()
	_, err := p.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?group=hang&authz.key=k&authz.build=hang"))
	took := time.Since(start)
	want := `kernel: export hang/demo.Echo: filter "acme.authz": the plugin did not answer Build within 3s`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Export with a Build that hangs: %v; want %q...", err, want)
	}
	if took < 2*time.Second || took > 20*time.Second {
		t.Errorf("Export with a Build that hangs failed after %v; want about 3s", took)
	}

	// the hung Build still runs in the plugin; other URLs build at once
	e, err := p.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?group=other&authz.key=k2"))
	if err != nil {
		t.Fatalf("Export with another URL after a hung Build: %v", err)
	}
	r, err := c.Refer(ctx, spi.MustParse("airnode://"+e.URL().Address()+"/other/demo.Echo"), spi.URL{})
	if err != nil {
		t.Fatalf("Refer with another URL after a hung Build: %v", err)
	}
	var got string
	if err := r.Call(spi.WithAttachments(ctx, "x-auth", "k2"), "Echo", []any{"x"}, &got); err != nil || got != "x" {
		t.Errorf("call through the other URL's filter: %q, %v", got, err)
	}
	if err := r.Call(ctx, "Echo", []any{"x"}, &got); spi.StatusOf(err) != spi.StatusBadRequest {
		t.Errorf("call without x-auth: %v; want BAD_REQUEST from the filter", err)
	}
}

// Tester9 #10: a registry plugin's builder says what it is in the plugin
// (spi.ReadOnlyRegistry, spi.RegistryReacher) and the host's builder
// answers the same, so that serve can refuse a read-only one before it
// listens.
func TestRegistryPluginSaysItIsReadOnly(t *testing.T) {
	cat := hostAcme(t)
	b, err := cat.Registry.Get("acme.dirreg")
	if err != nil {
		t.Fatal(err)
	}
	ro, ok := b.(spi.ReadOnlyRegistry)
	if !ok || !ro.ReadOnly() {
		t.Fatalf("plugin registry builder %T: ReadOnly not true (implements it: %v)", b, ok)
	}
	if r, ok := b.(spi.RegistryReacher); !ok || r.Reach() != spi.ReachShared {
		t.Errorf("Reach of a plugin that does not say: want shared")
	}
}

// The balancer side shares nothing with the filter side's Builds: in one
// plugin process (testdata/moody serves both), a balancer Build that hangs
// in the plugin holds up no filter Build, of the same URL or another.
func TestHungBalancerBuildHoldsUpNoFilterBuild(t *testing.T) {
	env, _ := hangFile(t)
	var ev events
	c := startMoody(t, "LB_BUILD=hang", env)
	const url = "airnode://127.0.0.1/demo.Echo?timeout=200ms"
	build(t, ev.options("acme.moody", c), url) // bounded by timeout, hangs on in the plugin
	if b, _, _ := ev.get(); len(b) != 1 || b[0].Point != "Build" {
		t.Fatalf("bypass reports %+v; want one for the hung Build", b)
	}
	fb := pluginrpc.NewFilterBuilder(pluginrpc.FilterOptions{Name: "acme.moody", Source: pluginrpc.StaticSource(c)})
	for _, u := range []string{url, "airnode://127.0.0.1/other/demo.Echo"} {
		if _, err := fb.Build(spi.MustParse(u)); err != nil {
			t.Errorf("filter Build of %s while a balancer Build hangs: %v", u, err)
		}
	}
}
