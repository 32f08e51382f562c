// Command staticregistry serves the static-file registry as an airnode
// plugin.
//
//	go build -o bin/staticregistry ./examples/staticregistry/cmd/staticregistry
package main

import (
	"github.com/airnode/airnode/examples/staticregistry"
	"github.com/airnode/airnode/sdk"
)

func main() { sdk.Serve(sdk.Plugins{Registry: staticregistry.Builder{}}) }
