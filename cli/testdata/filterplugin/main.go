// Command filterplugin is a test filter plugin ("passfilter", active on
// both sides) whose first argument sets what its filter does:
//
//	""          call next and return its result (what the conformance
//	            suite wants of a filter with nothing to do)
//	"drop"      call next and drop its result: return an empty one
//	"panic"     panic in Invoke
//	"upper"     upper-case every string argument, then call next
//	"wrongtype" set the first argument to the string "not a number",
//	            then call next
//	"tag"       set the attachment "x-tag" to "filterplugin", then call
//	            next
package main

import (
	"context"
	"os"
	"strings"

	"github.com/airnode/airnode/sdk"
	"github.com/airnode/airnode/spi"
)

type builder struct{ mode string }

func (builder) Name() string { return "passfilter" }
func (builder) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Consumer, spi.Provider}}
}
func (b builder) Build(spi.URL) (spi.Filter, error) { return filter(b), nil }

type filter struct{ mode string }

func (f filter) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	switch f.mode {
	case "drop":
		next.Invoke(ctx, inv)
		return spi.Result{}
	case "panic":
		panic("filterplugin: asked to panic")
	case "upper":
		for i, a := range inv.Args {
			if s, ok := a.(string); ok {
				inv.Args[i] = strings.ToUpper(s)
			}
		}
	case "wrongtype":
		if len(inv.Args) > 0 {
			inv.Args[0] = "not a number"
		}
	case "tag":
		inv.SetAttachment("x-tag", "filterplugin")
	}
	return next.Invoke(ctx, inv)
}

func main() {
	var b builder
	if len(os.Args) > 1 {
		b.mode = os.Args[1]
	}
	sdk.Serve(sdk.Plugins{Filter: b})
}
