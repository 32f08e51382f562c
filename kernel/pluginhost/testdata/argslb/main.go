// Command argslb is a test balancer plugin ("argslb") that picks by the
// call's first argument, a candidate index as a string ("3"), and picks
// candidate 0 of a call it sees without arguments. It reads arguments;
// noargslb, its other build, says it does not (ReadsArguments false) and
// picks alike, so which candidate it picks shows whether the host sent
// them. It declares the URL key acme.args.first; noargslb declares
// acme.args.spread instead.
package main

import (
	"fmt"
	"strconv"

	"github.com/airnode/airnode/sdk"
	"github.com/airnode/airnode/spi"
)

type builder struct{}

func (builder) Name() string                           { return "argslb" }
func (builder) Build(spi.URL) (spi.LoadBalance, error) { return balancer{}, nil }

// Keys declares one key, read by no code: the host shows what each build
// declares.
func (builder) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{{Key: "acme.args.first", Type: spi.KeyTypeInt, Default: "0", Doc: "the first candidate it may pick"}}
}

type balancer struct{}

func (balancer) Select(invokers []spi.Invoker, inv *spi.Invocation) spi.Invoker {
	if len(inv.Args) == 0 {
		return invokers[0]
	}
	i, err := strconv.Atoi(fmt.Sprint(inv.Args[0]))
	if err != nil || i < 0 || i >= len(invokers) {
		return invokers[0]
	}
	return invokers[i]
}

func main() { sdk.Serve(sdk.Plugins{LoadBalance: builder{}}) }
