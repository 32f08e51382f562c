// Command acmecli is the whole airnode command line with two in-process
// extensions of a third party, as README "In-process extensions" shows:
// the load balancer "acme.first" (the first provider, always) and the
// codec "acme.json" (the bundled JSON codec under another name and wire
// id 20). Each says on stderr, once per process, that it was used:
// "acme.first: picked ADDR" when it picks, "acme.json: decoding" when it
// decodes a body. Tests of package cli build and run it.
package main

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/airnode/airnode/cli"
	"github.com/airnode/airnode/extensions/codec/json"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// origin is where the extensions come from, as list shows it.
const origin = extension.Origin("github.com/airnode/airnode/cli/testdata/acmecli")

func main() {
	os.Exit(cli.Main(cli.WithName("acme-airnode"), cli.WithExtensions(func(cat *extension.Catalogs) error {
		if err := cat.LoadBalance.Register(first{}, origin); err != nil {
			return err
		}
		return cat.Codec.Register(codec{}, origin)
	})))
}

// first builds the "acme.first" balancer; it reads no URL key.
type first struct{}

func (first) Name() string                           { return "acme.first" }
func (first) Build(spi.URL) (spi.LoadBalance, error) { return first{}, nil }

var picked, decoding sync.Once

// Select returns the first invoker.
func (first) Select(invokers []spi.Invoker, _ *spi.Invocation) spi.Invoker {
	picked.Do(func() { fmt.Fprintln(os.Stderr, "acme.first: picked", invokers[0].URL().Address()) })
	return invokers[0]
}

// codec is the JSON codec named "acme.json", wire id 20.
type codec struct{ json.Codec }

func (codec) Name() string { return "acme.json" }
func (codec) ID() uint8    { return 20 }

func (c codec) NewDecoder(r io.Reader) spi.Decoder {
	decoding.Do(func() { fmt.Fprintln(os.Stderr, "acme.json: decoding") })
	return c.Codec.NewDecoder(r)
}
