// Command keyfilter is a test filter plugin ("keyfilter", both sides)
// activated by the URL key "acme.a"; keyfilter2, its other build,
// declares "acme.b" instead. Its filter passes calls.
package main

import (
	"context"

	"github.com/airnode/airnode/sdk"
	"github.com/airnode/airnode/spi"
)

type builder struct{}

func (builder) Name() string { return "keyfilter" }
func (builder) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Consumer, spi.Provider}, Key: "acme.a"}
}
func (builder) Build(spi.URL) (spi.Filter, error) { return filter{}, nil }

type filter struct{}

func (filter) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	return next.Invoke(ctx, inv)
}

func main() { sdk.Serve(sdk.Plugins{Filter: builder{}}) }
