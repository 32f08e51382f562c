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
//	"stamp"     call next and return its result with the response
//	            attachment "x-stamp.<side>" set to "s" (a correct filter:
//	            sdk/README)
//	"stampvalue" as "stamp", and replace the value with "replaced"
//	"nosides"   as "", activated by the URL key "pass.on" on no side
//	            (Activation{Key: "pass.on"}): only filter=passfilter
//	            selects it
//	"slow"      sleep 3 s (not watching ctx), then call next
package main

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/airnode/airnode/sdk"
	"github.com/airnode/airnode/spi"
)

type builder struct{ mode string }

func (builder) Name() string { return "passfilter" }
func (b builder) Activation() spi.Activation {
	if b.mode == "nosides" {
		return spi.Activation{Key: "pass.on"}
	}
	return spi.Activation{Sides: []spi.Side{spi.Consumer, spi.Provider}}
}
func (b builder) Build(u spi.URL) (spi.Filter, error) {
	return filter{mode: b.mode, side: u.ParamOr("side", "?")}, nil
}

type filter struct{ mode, side string }

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
	case "stamp", "stampvalue":
		r := next.Invoke(ctx, inv)
		if r.Attachments == nil {
			r.Attachments = map[string]string{}
		}
		r.Attachments["x-stamp."+f.side] = "s"
		if f.mode == "stampvalue" && r.Err == nil {
			r.Value = "replaced"
		}
		return r
	case "slow":
		time.Sleep(3 * time.Second)
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
