// Command junk is a broken plugin for tests: it prints to stdout before the
// handshake, which a plugin must never do.
package main

import (
	"fmt"

	"github.com/airnode/airnode/examples/p2c"
	"github.com/airnode/airnode/sdk"
)

func main() {
	fmt.Println("hello from a chatty plugin")
	sdk.Serve(sdk.Plugins{LoadBalance: p2c.Builder{}})
}
