// Command airnode is the airnode host binary: it runs a node (serve),
// calls and benchmarks services (call, bench), inspects registries
// (registry) and lists and explains the extension catalogs (list).
//
// The command line itself is package cli (github.com/airnode/airnode/cli);
// this main only runs it. Exit status: 0 on success, 1 on any failure,
// with the error on stderr, 2 on a usage error (unknown command or flag,
// missing or extra argument, a flag value of the wrong form); commands
// interrupted by SIGINT exit 130 (SIGTERM: 143), as shells report a
// process a signal ended.
package main

import (
	"os"

	"github.com/airnode/airnode/cli"
)

func main() { os.Exit(cli.Main()) }
