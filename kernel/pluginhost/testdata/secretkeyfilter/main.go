// Command secretkeyfilter is a test filter plugin ("keyfilter"), another
// build of keyfilter (both sides, activated by the URL key "acme.a")
// that also declares URL keys Secret: its own "acme.ah.password", and
// two it may not hide, the kernel's "timeout" and the bundled accesslog
// filter's "accesslog". Its filter passes calls.
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

func (builder) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{
		{Key: "acme.a", Type: spi.KeyTypeString, Doc: "activates the filter"},
		{Key: "acme.ah.password", Type: spi.KeyTypeString, Doc: "a password", Secret: true},
		{Key: "timeout", Type: spi.KeyTypeString, Doc: "the kernel's key, which it may not hide", Secret: true},
		{Key: "accesslog", Type: spi.KeyTypeString, Doc: "the accesslog filter's key, which it may not hide", Secret: true},
	}
}

type filter struct{}

func (filter) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	return next.Invoke(ctx, inv)
}

func main() { sdk.Serve(sdk.Plugins{Filter: builder{}}) }
