package pluginhost_test

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/kernel/pluginhost"
	"github.com/airnode/airnode/spi"
)

var moodyOnce sync.Once

// moody builds sdk/pluginrpc's testdata/moody plugin (a balancer and a
// filter that misbehave as their environment says) into bin, once.
func moody(t *testing.T) string {
	t.Helper()
	path := binary("moody")
	moodyOnce.Do(func() {
		cmd := exec.Command("go", "build", "-o", path, "github.com/airnode/airnode/sdk/pluginrpc/testdata/moody")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building moody: %v\n%s", err, out)
		}
	})
	return path
}

// moodyHost starts moody as plugin acme.moody at point with env and
// returns catalogs holding it and the host's log.
func moodyHost(t *testing.T, point string, env map[string]string) (*extension.Catalogs, *logbuf.Buffer) {
	t.Helper()
	var log logbuf.Buffer
	h := pluginhost.New([]config.Plugin{{Name: "acme.moody", Point: point, Command: moody(t), Env: env}},
		pluginhost.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	t.Cleanup(func() { _ = h.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	c := bundle.Catalogs()
	if err := h.Register(c); err != nil {
		t.Fatal(err)
	}
	return c, &log
}

// echoProviders exports demo.Echo from two provider nodes registered in a
// fresh file registry, each with the catalogs cat (nil: bundled), and
// returns the registry.
func echoProviders(t *testing.T, ctx context.Context, cat *extension.Catalogs) spi.URL {
	t.Helper()
	reg := spi.MustParse("file://" + t.TempDir())
	for range 2 {
		c := cat
		if c == nil {
			c = bundle.Catalogs()
		}
		n := kernel.NewNode(c, kernel.WithLogger(testLogger(t)), kernel.WithShutdownWait(0), kernel.WithRegistry(reg))
		t.Cleanup(func() { _ = n.Close() })
		if _, err := n.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo")); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

// sidedEcho exports demo.Echo at addr (host:port, port 0 for any) from a
// provider node and refers it directly (retries=0, timeout=10s) from a
// consumer node: the node on side has the plugin catalogs cat, the other
// the bundled ones.
func sidedEcho(t *testing.T, ctx context.Context, side spi.Side, cat *extension.Catalogs, addr string) *kernel.Reference {
	t.Helper()
	pcat, ccat := cat, bundle.Catalogs()
	if side == spi.Consumer {
		pcat, ccat = ccat, cat
	}
	p := kernel.NewNode(pcat, kernel.WithLogger(testLogger(t)), kernel.WithShutdownWait(0))
	t.Cleanup(func() { _ = p.Close() })
	e, err := p.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://"+addr+"/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	c := kernel.NewNode(ccat, kernel.WithLogger(testLogger(t)))
	t.Cleanup(func() { _ = c.Close() })
	ref, err := c.Refer(ctx, spi.MustParse("airnode://"+e.URL().Address()+"/demo.Echo?retries=0&timeout=10s"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// refer refers raw from a consumer node with catalogs cat and waits for
// both providers.
func refer(t *testing.T, ctx context.Context, cat *extension.Catalogs, reg spi.URL, raw string) *kernel.Reference {
	t.Helper()
	c := kernel.NewNode(cat, kernel.WithLogger(testLogger(t)), kernel.WithRegistry(reg))
	t.Cleanup(func() { _ = c.Close() })
	ref, err := c.Refer(ctx, spi.MustParse(raw), reg)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); len(ref.Providers()) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("providers: %d", len(ref.Providers()))
		}
	}
	return ref
}

// tester9 finding 1: a balancer plugin whose Select hangs costs a call
// half of its caller's deadline (75 of 150 ms), not the 1 s bound; the
// call then goes on with the default balancer (tester36 F6: it failed
// CLIENT_TIMEOUT at its whole deadline); the host logs one warning and
// bypasses the plugin, so the next calls go through the default balancer
// at once.
func TestHungBalancerPluginCostsOneCallItsDeadlineThenIsBypassed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	hang := filepath.Join(t.TempDir(), "hang")
	if err := os.WriteFile(hang, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cat, log := moodyHost(t, "loadbalance", map[string]string{"LB_MODE": "hang", "HANG_FILE": hang})
	t.Cleanup(func() { _ = os.Remove(hang) }) // before the host closes: its handlers return
	ref := refer(t, ctx, cat, echoProviders(t, ctx, nil), "airnode:///demo.Echo?loadbalance=acme.moody")

	cctx, ccancel := context.WithTimeout(ctx, 150*time.Millisecond)
	start := time.Now()
	v, err := ref.Invoke(cctx, "Echo", "hi")
	took := time.Since(start)
	ccancel()
	if err != nil || v != "hi" {
		t.Fatalf("got %v, %v; want the default balancer's call to pass", v, err)
	}
	if took > 900*time.Millisecond {
		t.Fatalf("the call took %v under a 150ms deadline", took)
	}
	for i := range 10 {
		cctx, ccancel := context.WithTimeout(ctx, 150*time.Millisecond)
		v, err := ref.Invoke(cctx, "Echo", "hi")
		ccancel()
		if err != nil || v != "hi" {
			t.Fatalf("call %d while bypassed: %v, %v", i, v, err)
		}
	}
	out := log.String()
	if n := strings.Count(out, "did not answer in time"); n != 1 || !strings.Contains(out, "plugin=acme.moody") || !strings.Contains(out, "call=Select") {
		t.Fatalf("want one bypass warning naming the plugin and Select:\n%s", out)
	}
}

// tester9 finding 5: a balancer plugin returning nil with two providers at
// weight 100 is named in the error, not the weights.
func TestNilBalancerPluginIsNamed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cat, _ := moodyHost(t, "loadbalance", map[string]string{"LB_MODE": "nil"})
	ref := refer(t, ctx, cat, echoProviders(t, ctx, nil), "airnode:///demo.Echo?loadbalance=acme.moody")
	_, err := ref.Invoke(ctx, "Echo", "hi")
	if spi.StatusOf(err) != spi.StatusServiceNotFound || !strings.Contains(err.Error(), "balancer acme.moody returned no provider out of 2") {
		t.Fatalf("got %v", err)
	}
}

// tester9 finding 9: a provider's filter plugin cannot change what the
// service sees as the caller's address, nor add timeout or token; the
// host warns once per key.
func TestProviderFilterPluginCannotForgeRemote(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cat, log := moodyHost(t, "filter", map[string]string{"F_MODE": "forge"})
	ref := refer(t, ctx, bundle.Catalogs(), echoProviders(t, ctx, cat), "airnode:///demo.Echo")
	for range 3 {
		var info demo.Info
		if err := ref.Call(ctx, "Info", nil, &info); err != nil {
			t.Fatal(err)
		}
		a := info.Attachments
		if !strings.HasPrefix(a["remote"], "127.0.0.1:") || a["token"] != "" || a["timeout"] != "" || a["x-forged"] != "yes" {
			t.Fatalf("the service saw %v; want the real remote, no token or timeout, x-forged passed", a)
		}
	}
	out := log.String()
	for _, k := range []string{"remote", "timeout", "token"} {
		if n := strings.Count(out, "key="+k+" "); n != 1 {
			t.Errorf("key %s warned %d times; want once:\n%s", k, n, out)
		}
	}
}

// tester9 finding 1: a balancer plugin whose Build hangs delays Refer by
// at most the reference's timeout (not 1 s), and is not tried again on
// every call: the calls that follow go through the default balancer.
func TestHungBalancerBuildIsBypassedNotRetriedPerCall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	hang := filepath.Join(t.TempDir(), "hang")
	if err := os.WriteFile(hang, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cat, log := moodyHost(t, "loadbalance", map[string]string{"LB_BUILD": "hang", "HANG_FILE": hang})
	t.Cleanup(func() { _ = os.Remove(hang) }) // before the host closes: its handlers return
	reg := echoProviders(t, ctx, nil)
	start := time.Now()
	ref := refer(t, ctx, cat, reg, "airnode:///demo.Echo?loadbalance=acme.moody&timeout=300ms")
	if d := time.Since(start); d > 900*time.Millisecond {
		t.Fatalf("Refer took %v with a hung Build and timeout=300ms", d)
	}
	for i := range 3 {
		cctx, ccancel := context.WithTimeout(ctx, 150*time.Millisecond)
		v, err := ref.Invoke(cctx, "Echo", "hi")
		ccancel()
		if err != nil || v != "hi" {
			t.Fatalf("call %d: %v, %v; want the default balancer's pick", i, v, err)
		}
	}
	if out := log.String(); strings.Count(out, "did not answer in time") != 1 || !strings.Contains(out, "call=Build") {
		t.Fatalf("want one bypass warning for Build:\n%s", out)
	}
}
