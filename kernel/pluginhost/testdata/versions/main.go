// Command versions is a p2c plugin for tests that offers the protocol
// versions listed in $TEST_PLUGIN_VERSIONS (comma-separated), each served by
// the version-1 plugin set: it shows go-plugin's negotiation. A non-empty
// $TEST_PLUGIN_COOKIE replaces the magic cookie's value, as a binary built
// against another handshake has.
package main

import (
	"os"
	"strconv"
	"strings"

	"github.com/hashicorp/go-plugin"

	"github.com/airnode/airnode/examples/p2c"
	"github.com/airnode/airnode/sdk/pluginrpc"
)

func main() {
	set := pluginrpc.ServerPlugins(pluginrpc.Impl{LoadBalance: p2c.Builder{}})[pluginrpc.ProtocolVersion]
	versions := map[int]plugin.PluginSet{}
	for _, v := range strings.Split(os.Getenv("TEST_PLUGIN_VERSIONS"), ",") {
		n, err := strconv.Atoi(v)
		if err != nil {
			panic(err)
		}
		versions[n] = set
	}
	hs := pluginrpc.Handshake
	if c := os.Getenv("TEST_PLUGIN_COOKIE"); c != "" {
		hs.MagicCookieValue = c
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  hs,
		VersionedPlugins: versions,
		GRPCServer:       plugin.DefaultGRPCServer,
	})
}
