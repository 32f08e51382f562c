package kernel

import (
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/airnode/airnode/extensions/registry/direct"
	"github.com/airnode/airnode/extensions/registry/memory"
	"github.com/airnode/airnode/extensions/transport/smux"
	"github.com/airnode/airnode/extensions/transport/tcp"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// Minimal codec, balancer and cluster for the kernel's own tests, so they
// do not depend on which extensions have landed; the end-to-end tests in
// cmd/airnode use the bundle.

type jsonCodec struct{}

func (jsonCodec) Name() string                       { return "msgpack" } // the default name
func (jsonCodec) ID() uint8                          { return 9 }
func (jsonCodec) NewEncoder(w io.Writer) spi.Encoder { return json.NewEncoder(w) }
func (jsonCodec) NewDecoder(r io.Reader) spi.Decoder {
	d := json.NewDecoder(r)
	return d
}

type firstLB struct{}

func (firstLB) Name() string                                             { return "random" }
func (firstLB) Build(spi.URL) (spi.LoadBalance, error)                   { return firstLB{}, nil }
func (firstLB) Select(invs []spi.Invoker, _ *spi.Invocation) spi.Invoker { return invs[0] }

type failfast struct{}

func (failfast) Name() string                       { return "failover" }
func (failfast) Build(spi.URL) (spi.Cluster, error) { return failfast{}, nil }
func (failfast) Invoke(ctx context.Context, inv *spi.Invocation, dir spi.Directory, lb spi.LoadBalance) spi.Result {
	invs := dir.List(inv)
	if len(invs) == 0 {
		return spi.Result{Err: spi.Errorf(spi.StatusServiceNotFound, "no provider of %s in %s", inv.Service, dir.Registry())}
	}
	return lb.Select(invs, inv).Invoke(ctx, inv)
}

func testCatalogs(t *testing.T) *extension.Catalogs {
	t.Helper()
	c := extension.New()
	for _, err := range []error{
		c.Transport.Register(smux.Builder{}, extension.Bundled),
		c.Transport.Register(tcp.Builder{}, extension.Bundled),
		c.Registry.Register(direct.Builder{}, extension.Bundled),
		c.Registry.Register(memory.NewBuilder(), extension.Bundled),
		c.Codec.Register(jsonCodec{}, extension.Bundled),
		c.LoadBalance.Register(firstLB{}, extension.Bundled),
		c.Cluster.Register(failfast{}, extension.Bundled),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return c
}
