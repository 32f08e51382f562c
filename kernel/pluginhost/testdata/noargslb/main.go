// Command noargslb is argslb's other build: a test balancer plugin
// ("argslb") that says it does not read the call's arguments
// (ReadsArguments false) but picks as argslb does, by the first argument
// when it gets one, so which candidate it picks shows whether the host
// sent them. It declares the URL key acme.args.spread; argslb declares
// acme.args.first instead.
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
func (builder) ReadsArguments() bool                   { return false }

// Keys declares one key, read by no code: the host shows what each build
// declares.
func (builder) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{{Key: "acme.args.spread", Type: spi.KeyTypeInt, Default: "0", Doc: "how many candidates it picks among"}}
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
