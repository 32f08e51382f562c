package kernel_test

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/internal/zktest"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// t74wSleeper is the service of the method-key tests: Sleep(ms) sleeps,
// Echo answers at once.
type t74wSleeper struct{}

func (t74wSleeper) Sleep(ctx context.Context, ms int) (int, error) {
	select {
	case <-time.After(time.Duration(ms) * time.Millisecond):
	case <-ctx.Done():
	}
	return ms, nil
}

func (t74wSleeper) Echo(_ context.Context, s string) (string, error) { return s, nil }

// zkEntries returns the entries under /dubbo/<iface>/<category> of the
// ZooKeeper at addr, decoded.
func zkEntries(t *testing.T, addr, iface, category string) []spi.URL {
	t.Helper()
	c, _, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	names, _, err := c.Children("/dubbo/" + iface + "/" + category)
	if err != nil {
		t.Fatalf("ls /dubbo/%s/%s: %v", iface, category, err)
	}
	var out []spi.URL
	for _, n := range names {
		s, err := url.QueryUnescape(n)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, spi.MustParse(s))
	}
	return out
}

// Tester74 leftovers: a provider's and a consumer's entries in a real
// ZooKeeper carry an application (the executable's base name when none is
// given; the URL's own when given) and method-level keys in Dubbo's
// spelling, Echo.timeout=300, which Dubbo 2.7 and Dubbo Admin read, not
// airnode's methods.Echo.timeout.
func TestT74W_EntriesCarryApplicationAndDubboMethodKeys(t *testing.T) {
	zs, err := zktest.StartTick(200 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer zs.Close()
	reg := spi.MustParse(zs.URL("root=/dubbo&session.timeout=4s"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	if kernel.DefaultApplication() != "kernel.test" {
		t.Errorf("DefaultApplication() = %q, want kernel.test, this test binary's base name", kernel.DefaultApplication())
	}
	p := kernel.NewNode(bundle.Catalogs(), kernel.WithRegistry(reg), kernel.WithShutdownWait(0))
	defer p.Close()
	if _, err := p.Export(ctx, t74wSleeper{}, spi.MustParse("airnode://127.0.0.1:0/t.AppA?methods.Echo.timeout=300ms&methods.Sleep.retries=0&timeout=2s")); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Export(ctx, t74wSleeper{}, spi.MustParse("airnode://127.0.0.1:0/t.AppB?application=shop&Sleep.timeout=250")); err != nil {
		t.Fatal(err)
	}
	a := zkEntries(t, zs.Addr(), "t.AppA", "providers")
	b := zkEntries(t, zs.Addr(), "t.AppB", "providers")
	if len(a) != 1 || len(b) != 1 {
		t.Fatalf("providers entries %v, %v: want one each", a, b)
	}
	for k, v := range map[string]string{"application": "kernel.test", "Echo.timeout": "300", "Sleep.retries": "0", "timeout": "2000"} {
		if got, ok := a[0].Param(k); !ok || got != v {
			t.Errorf("t.AppA entry %s=%q (set %v), want %q: %s", k, got, ok, v, a[0])
		}
	}
	for _, k := range []string{"methods.Echo.timeout", "methods.Sleep.retries"} {
		if _, ok := a[0].Param(k); ok {
			t.Errorf("t.AppA entry has airnode's spelling %s, want Dubbo's only: %s", k, a[0])
		}
	}
	for k, v := range map[string]string{"application": "shop", "Sleep.timeout": "250"} {
		if got, _ := b[0].Param(k); got != v {
			t.Errorf("t.AppB entry %s=%q, want %q (given): %s", k, got, v, b[0])
		}
	}

	c := kernel.NewNode(bundle.Catalogs())
	defer c.Close()
	for _, iface := range []string{"t.AppA", "t.AppB"} {
		ref, err := c.Refer(ctx, spi.MustParse("airnode:///"+iface+"?application=shop-web"), reg)
		if err != nil {
			t.Fatal(err)
		}
		if !ref.WaitAvailable(ctx) {
			t.Fatalf("%s: no provider within 30s", iface)
		}
	}
	ref, err := c.Refer(ctx, spi.MustParse("airnode:///t.AppA?methods.Sleep.timeout=1500ms"), reg)
	if err != nil {
		t.Fatal(err)
	}
	if !ref.WaitAvailable(ctx) {
		t.Fatal("t.AppA: no provider within 30s")
	}
	cons := zkEntries(t, zs.Addr(), "t.AppA", "consumers")
	apps := map[string]int{}
	for _, e := range cons {
		app, _ := e.Param("application")
		apps[app]++
		if app == "kernel.test" {
			if v, _ := e.Param("Sleep.timeout"); v != "1500" {
				t.Errorf("consumer entry Sleep.timeout=%q, want 1500 (Dubbo's spelling, ms): %s", v, e)
			}
			if _, ok := e.Param("methods.Sleep.timeout"); ok {
				t.Errorf("consumer entry has methods.Sleep.timeout, want Sleep.timeout only: %s", e)
			}
		}
	}
	if apps["shop-web"] != 1 || apps["kernel.test"] != 1 || len(cons) != 2 {
		t.Errorf("consumer entries of t.AppA by application %v, want shop-web (given) and kernel.test (default) once each: %v", apps, cons)
	}
}

// Tester74: an airnode consumer reads a method's timeout from a provider
// entry in either spelling: Dubbo's Sleep.timeout=200 (a Dubbo provider's,
// and airnode's from now on) and methods.Sleep.timeout=200 (an older
// airnode provider's). The entries are written by hand into a real
// ZooKeeper, pointing at a real provider exported without a registry;
// Sleep(1500) then fails at the 200 ms timeout, not the entry's 5 s
// service-level one, and Echo keeps 5 s.
func TestT74W_ConsumerReadsBothMethodKeySpellings(t *testing.T) {
	zs, err := zktest.StartTick(200 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer zs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := kernel.NewNode(bundle.Catalogs(), kernel.WithShutdownWait(0))
	defer p.Close()
	e, err := p.Export(ctx, t74wSleeper{}, spi.MustParse("airnode://127.0.0.1:0/t.Spell"))
	if err != nil {
		t.Fatal(err)
	}
	zc, _, err := zk.Connect([]string{zs.Addr()}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer zc.Close()
	for _, tc := range []struct{ name, key string }{{"dubbo", "Sleep.timeout"}, {"older airnode", "methods.Sleep.timeout"}} {
		t.Run(tc.name, func(t *testing.T) {
			iface := "t.Spell" + map[string]string{"dubbo": "D", "older airnode": "A"}[tc.name]
			entry := e.URL().WithPath(iface).With("interface", iface).With("timeout", "5000").With(tc.key, "200")
			for _, path := range []string{"/dubbo", "/dubbo/" + iface, "/dubbo/" + iface + "/providers"} {
				if _, err := zc.Create(path, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
					t.Fatal(err)
				}
			}
			if _, err := zc.Create("/dubbo/"+iface+"/providers/"+url.QueryEscape(entry.String()), nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatal(err)
			}
			// the provider serves t.Spell; the consumer calls it under
			// iface's entry, so it calls the service by the entry's path:
			// give the provider's service that name too
			if _, err := p.Export(ctx, t74wSleeper{}, e.URL().WithPath(iface).Without("timestamp", "methods", "side", "pid", "application", "Sleep.timeout", "methods.Sleep.timeout")); err != nil {
				t.Fatal(err)
			}
			c := kernel.NewNode(bundle.Catalogs())
			defer c.Close()
			ref, err := c.Refer(ctx, spi.MustParse("airnode:///"+iface+"?retries=0"), spi.MustParse(zs.URL("root=/dubbo")))
			if err != nil {
				t.Fatal(err)
			}
			if !ref.WaitAvailable(ctx) {
				t.Fatal("no provider within 30s")
			}
			if v, err := ref.Providers()[0].URL().MethodDuration("Sleep", "timeout", 0); err != nil || v != 200*time.Millisecond {
				t.Errorf("effective Sleep timeout %v, %v; want 200ms from %s=200", v, err, tc.key)
			}
			start := time.Now()
			var got int
			err = ref.Call(ctx, "Sleep", []any{1500}, &got)
			took := time.Since(start)
			if st := spi.StatusOf(err); st != spi.StatusServerTimeout && st != spi.StatusClientTimeout {
				t.Fatalf("Sleep(1500) = %d, %v (status %v) after %v; want a timeout at 200ms", got, err, st, took)
			}
			if took > 1200*time.Millisecond {
				t.Errorf("Sleep(1500) timed out after %v, want about 200ms (%s=200), not the 5s of timeout=5000", took, tc.key)
			}
			var s string
			if err := ref.Call(ctx, "Echo", []any{"x"}, &s); err != nil || s != "x" {
				t.Errorf("Echo = %q, %v", s, err)
			}
		})
	}
}
