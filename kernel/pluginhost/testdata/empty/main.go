// Command empty is a broken plugin for tests: it serves nothing, so
// sdk.Serve writes its reason on stderr and exits 1 before the handshake.
package main

import "github.com/airnode/airnode/sdk"

func main() { sdk.Serve(sdk.Plugins{}) }
