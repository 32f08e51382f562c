package kernel

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// TestAy_NoProviderNamesTheRegistrysNearMiss (nu83 #1, #10): a misspelt
// service referred through a registry failed "no provider available for
// shop.Shopp (registry: ...)" with no did-you-mean, where a call by
// address names the service meant; and a registry directory that lists
// nothing (a mistyped path, created empty) said nothing of it. Both now
// say what the registry lists instead, looked up on the error path only.
func TestAy_NoProviderNamesTheRegistrysNearMiss(t *testing.T) {
	reg := spi.MustParse("file://" + t.TempDir())
	provider(t, WithRegistry(reg))
	c := consumer(t)
	r, err := c.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echoo"), reg)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = r.Invoke(ctxT(t), "Echo", "x")
	want := `no provider available for demo.Echoo (registry: ` + reg.String() + `); the registry lists no provider of demo.Echoo; did you mean "demo.Echo"?`
	if spi.StatusOf(err) != spi.StatusServiceNotFound || !strings.Contains(err.Error(), want) {
		t.Errorf("Invoke of demo.Echoo = %v, want SERVICE_NOT_FOUND %q", err, want)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the call's error took %v", d)
	}

	empty := spi.MustParse("file://" + filepath.Join(t.TempDir(), "nonexist"))
	r2, err := c.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo"), empty)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r2.Invoke(ctxT(t), "Echo", "x")
	if spi.StatusOf(err) != spi.StatusServiceNotFound || !strings.Contains(err.Error(), "; the registry lists no service at all") {
		t.Errorf("Invoke through an empty registry = %v, want SERVICE_NOT_FOUND saying the registry lists no service", err)
	}
}

// TestAy_HostThatLooksLikeAnInterface (nu83 #10): airnode://shop.Shop (two
// slashes) has shop.Shop as its host and no interface; the error suggests
// the three-slash form.
func TestAy_HostThatLooksLikeAnInterface(t *testing.T) {
	_, err := consumer(t).Refer(ctxT(t), spi.MustParse("airnode://shop.Shop?timeout=2s"), spi.URL{})
	if err == nil || !strings.Contains(err.Error(), "no service interface") || !strings.Contains(err.Error(), `did you mean "airnode:///shop.Shop?timeout=2s"?`) {
		t.Errorf("Refer(airnode://shop.Shop) = %v, want the three-slash form suggested", err)
	}
	_, err = consumer(t).Refer(ctxT(t), spi.MustParse("airnode://127.0.0.1:20880"), spi.URL{})
	if err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("Refer(airnode://127.0.0.1:20880) = %v, want no interface and no suggestion", err)
	}
}
