package integration

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/extensions/filter/accesslog"
	"github.com/airnode/airnode/extensions/filter/activelimit"
	"github.com/airnode/airnode/extensions/filter/executelimit"
	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/extensions/filter/threadlimit"
	"github.com/airnode/airnode/extensions/filter/token"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

func TestMain(m *testing.M) {
	slog.SetDefault(quiet) // the TLS listeners' handshake warnings, expected in the TLS tests
	goleak.VerifyTestMain(m)
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// catalogs returns the bundled catalogs with this filters added
// where the bundle does not have them yet.
func catalogs(t testing.TB) *extension.Catalogs {
	t.Helper()
	c := bundle.Catalogs()
	for _, b := range []spi.FilterBuilder{metrics.NewBuilder(nil), &accesslog.Builder{}, token.Builder{}, executelimit.Builder{}, activelimit.Builder{}, &threadlimit.Builder{}} {
		if _, ok := c.Filter.Origin(b.Name()); !ok {
			if err := c.Filter.Register(b, extension.Bundled); err != nil {
				t.Fatal(err)
			}
		}
	}
	return c
}

// registryOf returns the metrics registry of a node's catalogs.
func registryOf(t *testing.T, n *kernel.Node) *metrics.Registry {
	t.Helper()
	b, err := n.Catalogs().Filter.Get(metrics.Name)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := metrics.RegistryOf(b)
	if !ok {
		t.Fatal("the metrics filter is not metrics.Builder")
	}
	return r
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newNode(t *testing.T) *kernel.Node {
	t.Helper()
	n := kernel.NewNode(catalogs(t), kernel.WithLogger(quiet), kernel.WithShutdownWait(0))
	t.Cleanup(func() { _ = n.Close() })
	return n
}

// provider exports demo.Echo on a free loopback port with the query q and
// returns the node and the provider's address.
func provider(t *testing.T, q string) (*kernel.Node, string) {
	t.Helper()
	n := newNode(t)
	e, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?"+q))
	if err != nil {
		t.Fatal(err)
	}
	return n, e.URL().Address()
}

// refer returns a direct reference to demo.Echo at addr with the query q.
func refer(t *testing.T, n *kernel.Node, addr, q string) *kernel.Reference {
	t.Helper()
	r, err := n.Refer(ctxT(t), spi.MustParse("airnode://"+addr+"/demo.Echo?"+q), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// newNodeB, providerB and referB are newNode, provider and refer for
// benchmarks.
func newNodeB(tb testing.TB) *kernel.Node {
	return kernel.NewNode(catalogs(tb), kernel.WithLogger(quiet), kernel.WithShutdownWait(0))
}

func providerB(tb testing.TB, q string) (*kernel.Node, string) {
	n := newNodeB(tb)
	e, err := n.Export(context.Background(), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?"+q))
	if err != nil {
		tb.Fatal(err)
	}
	return n, e.URL().Address()
}

func referB(tb testing.TB, n *kernel.Node, addr, q string) *kernel.Reference {
	r, err := n.Refer(context.Background(), spi.MustParse("airnode://"+addr+"/demo.Echo?"+q), spi.URL{})
	if err != nil {
		tb.Fatal(err)
	}
	return r
}
