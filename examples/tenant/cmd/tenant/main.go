// Command tenant is the tenant filter as an airnode plugin binary.
//
//	go build -o bin/tenant ./examples/tenant/cmd/tenant
package main

import (
	"github.com/airnode/airnode/examples/tenant"
	"github.com/airnode/airnode/sdk"
)

func main() { sdk.Serve(sdk.Plugins{Filter: tenant.Builder{}}) }
