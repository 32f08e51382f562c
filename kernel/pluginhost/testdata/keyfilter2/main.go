// Command keyfilter2 is a test filter plugin ("keyfilter") activated on
// the consumer side only, by the URL key "acme.b", order 7; keyfilter,
// its other build, declares both sides, "acme.a", order 0. Its filter
// passes calls.
package main

import (
	"context"

	"github.com/airnode/airnode/sdk"
	"github.com/airnode/airnode/spi"
)

type builder struct{}

func (builder) Name() string { return "keyfilter" }
func (builder) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Consumer}, Key: "acme.b", Order: 7}
}
func (builder) Build(spi.URL) (spi.Filter, error) { return filter{}, nil }

type filter struct{}

func (filter) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	return next.Invoke(ctx, inv)
}

func main() { sdk.Serve(sdk.Plugins{Filter: builder{}}) }
