package direct_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/extensions/registry/direct"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func build(t *testing.T, s string) spi.Registry {
	t.Helper()
	r, err := direct.Builder{}.Build(spi.MustParse(s))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func first(t *testing.T, r spi.Registry, consumer spi.URL) []spi.URL {
	t.Helper()
	got := make(chan []spi.URL, 1)
	sub, err := r.Subscribe(context.Background(), consumer, func(l []spi.URL) { got <- l })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	select {
	case l := <-got:
		return l
	case <-time.After(5 * time.Second):
		t.Fatal("no push")
		return nil
	}
}

func TestConsumerMultiHostURL(t *testing.T) {
	r := build(t, "airnode://127.0.0.1:1,127.0.0.1:2/demo.Echo?timeout=5s")
	l := first(t, r, spi.MustParse("airnode://127.0.0.1:1,127.0.0.1:2/demo.Echo?timeout=5s&side=consumer"))
	if len(l) != 2 || l[0].Address() != "127.0.0.1:1" || l[1].Address() != "127.0.0.1:2" {
		t.Fatalf("providers = %v", l)
	}
	if l[0].Path() != "demo.Echo" || l[0].Scheme() != "airnode" || l[0].ParamOr("timeout", "") != "5s" {
		t.Fatalf("provider URL = %v", l[0])
	}
	if _, ok := l[0].Param("side"); ok {
		t.Fatalf("provider URL keeps side: %v", l[0])
	}
}

func TestDirectSchemeWithBackup(t *testing.T) {
	r := build(t, "direct://10.0.0.1:20880?backup=10.0.0.2:20880")
	l := first(t, r, spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer"))
	if len(l) != 2 || l[0].Address() != "10.0.0.1:20880" || l[1].Address() != "10.0.0.2:20880" {
		t.Fatalf("providers = %v", l)
	}
}

func TestEmptyDirectUsesConsumerHosts(t *testing.T) {
	r := build(t, "direct://")
	l, err := r.Lookup(context.Background(), spi.MustParse("airnode://127.0.0.1:7,[::1]:8/demo.Echo"))
	if err != nil || len(l) != 2 || l[0].Address() != "127.0.0.1:7" || l[1].Address() != "[::1]:8" {
		t.Fatalf("providers = %v, %v", l, err)
	}
}

func TestRegisterIsNoOpAndServicesUnsupported(t *testing.T) {
	r := build(t, "direct://127.0.0.1:1")
	if err := r.Register(context.Background(), spi.MustParse("airnode://127.0.0.1:9/x")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Services(context.Background()); !errors.Is(err, spi.ErrNotSupported) {
		t.Fatalf("Services err = %v", err)
	}
}

func TestBuildRejectsBadAddress(t *testing.T) {
	for _, s := range []string{"direct://127.0.0.1", "direct://h:1,h2"} {
		if _, err := (direct.Builder{}).Build(spi.MustParse(s)); err == nil {
			t.Errorf("Build(%q) succeeded", s)
		}
	}
}

func TestLifecycle(t *testing.T) {
	r, err := direct.Builder{}.Build(spi.MustParse("direct://127.0.0.1:1"))
	if err != nil {
		t.Fatal(err)
	}
	spitest.TestRegistryLifecycle(t, r, spi.MustParse("airnode://127.0.0.1/demo.Echo"))
}

// direct:// publishes nothing; airnode serve warns about it
// (spi.RegistryReacher).
func TestReachIsNone(t *testing.T) {
	if got := (direct.Builder{}).Reach(); got != spi.ReachNone {
		t.Errorf("Reach() = %v, want none", got)
	}
}

// A reference's weight, warmup and timestamp are the providers' own keys
// (spi.MergeURL keeps a provider's): the provider URLs leave them out, so
// a reference's weight=0 does not make every provider unpickable (cli3:
// "all 1 providers have weight 0" while Refer said the key has no
// effect). Its other keys stay, method-level forms included.
func TestProviderURLsLeaveOutTheProvidersOwnKeys(t *testing.T) {
	u := "airnode://127.0.0.1:1,127.0.0.1:2/demo.Echo?weight=0&warmup=1h&timestamp=1&timeout=5s&methods.Echo.weight=3"
	r := build(t, u)
	for _, l := range [][]spi.URL{first(t, r, spi.MustParse(u+"&side=consumer")), lookup(t, r, spi.MustParse(u))} {
		if len(l) != 2 {
			t.Fatalf("providers = %v", l)
		}
		for _, p := range l {
			for _, k := range []string{"weight", "warmup", "timestamp"} {
				if v, ok := p.Param(k); ok {
					t.Errorf("provider URL %v keeps the reference's %s=%s", p, k, v)
				}
			}
			if p.ParamOr("timeout", "") != "5s" || p.ParamOr("methods.Echo.weight", "") != "3" {
				t.Errorf("provider URL %v lost the reference's other keys", p)
			}
		}
	}
}

func lookup(t *testing.T, r spi.Registry, consumer spi.URL) []spi.URL {
	t.Helper()
	l, err := r.Lookup(context.Background(), consumer)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
