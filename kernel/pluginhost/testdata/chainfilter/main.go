// Command chainfilter is a test filter plugin ("switchfilter", both
// sides) built with this sdk: it speaks Filter.Chain, and its filter
// wraps the call, turning a successful result v into "chain:v", which
// only a filter with a real next can do. unaryfilter is its other build.
package main

import (
	"context"
	"fmt"

	"github.com/airnode/airnode/sdk"
	"github.com/airnode/airnode/spi"
)

type builder struct{}

func (builder) Name() string { return "switchfilter" }
func (builder) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Consumer, spi.Provider}}
}
func (builder) Build(spi.URL) (spi.Filter, error) { return filter{}, nil }

type filter struct{}

func (filter) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	r := next.Invoke(ctx, inv)
	if r.Err == nil {
		r.Value = fmt.Sprintf("chain:%v", r.Value)
	}
	return r
}

func main() { sdk.Serve(sdk.Plugins{Filter: builder{}}) }
