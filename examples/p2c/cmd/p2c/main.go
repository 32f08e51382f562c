// Command p2c is the p2c load balancer as an airnode plugin binary.
//
//	go build -o bin/p2c ./examples/p2c/cmd/p2c
package main

import (
	"github.com/airnode/airnode/examples/p2c"
	"github.com/airnode/airnode/sdk"
)

func main() { sdk.Serve(sdk.Plugins{LoadBalance: p2c.Builder{}}) }
