// Command greeter serves greeter.Greeter as an airnode service plugin.
//
//	go build -o bin/greeter ./examples/greeter/cmd/greeter
package main

import (
	"github.com/airnode/airnode/examples/greeter"
	"github.com/airnode/airnode/sdk"
)

func main() {
	sdk.Serve(sdk.Plugins{Services: []sdk.Service{{Name: greeter.ServiceName, Impl: greeter.Greeter{}}}})
}
