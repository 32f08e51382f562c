package bundle_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// Tester8 finding: a provider and a consumer built from two
// bundle.Catalogs() calls have separate memory:// registries, and the
// consumer's calls failed with a bare "no provider available". The error
// names that cause; one catalog set shared by both nodes works.
func TestMemoryRegistryOfAnotherCatalogSetIsNamedAsTheCause(t *testing.T) {
	quiet := kernel.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	reg := spi.MustParse("memory://hb")
	node := func(c *extension.Catalogs) *kernel.Node { return kernel.NewNode(c, quiet, kernel.WithRegistry(reg)) }
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	call := func(provider, consumer *kernel.Node) error {
		if _, err := provider.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo")); err != nil {
			t.Fatal(err)
		}
		r, err := consumer.Refer(ctx, spi.MustParse("airnode:///demo.Echo?timeout=2s"), reg)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		_, err = r.Invoke(ctx, "Echo", "hi")
		return err
	}

	shared := bundle.Catalogs()
	p, c := node(shared), node(shared)
	defer p.Close()
	defer c.Close()
	if err := call(p, c); err != nil {
		t.Fatalf("one catalog set: %v", err)
	}

	p2, c2 := node(bundle.Catalogs()), node(bundle.Catalogs())
	defer p2.Close()
	defer c2.Close()
	err := call(p2, c2)
	if spi.StatusOf(err) != spi.StatusServiceNotFound || !strings.Contains(err.Error(), "one bundle.Catalogs() call") {
		t.Fatalf("two catalog sets: %v, want SERVICE_NOT_FOUND naming the separate memory registries", err)
	}
}
