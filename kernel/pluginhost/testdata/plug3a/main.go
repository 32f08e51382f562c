// Command plug3a is a test plugin: a provider filter ("plug3a", activated
// on the provider, order 100) that passes every call on, and exits with
// status 3 when a call carries the attachment plug3a.exit. Before
// sdk.Serve it writes $PLUG3A_LINES lines on stderr ("early line 0",
// "early line 1", ...) and $PLUG3A_RECORDS records of its sdk.Logger() at
// info ("early record" with n=0, n=1, ...), then, when $PLUG3A_WARN is
// set, one warning record with it as its message, and when $PLUG3A_PANIC
// is 1, panics assigning to a nil map, as a plugin whose configuration is
// missing would; when $PLUG3A_EXIT is 1, it exits with status 1 instead of
// serving.
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/airnode/airnode/sdk"
	"github.com/airnode/airnode/spi"
)

type builder struct{}

func (builder) Name() string { return "plug3a" }

func (builder) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Provider}, Order: 100}
}

func (builder) Build(spi.URL) (spi.Filter, error) { return filter{}, nil }

type filter struct{}

func (filter) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	if inv.Attachment("plug3a.exit") != "" {
		os.Exit(3)
	}
	return next.Invoke(ctx, inv)
}

func main() {
	n, _ := strconv.Atoi(os.Getenv("PLUG3A_LINES"))
	for i := range n {
		fmt.Fprintf(os.Stderr, "early line %d\n", i)
	}
	records, _ := strconv.Atoi(os.Getenv("PLUG3A_RECORDS"))
	for i := range records {
		sdk.Logger().Info("early record", "n", i)
	}
	if w := os.Getenv("PLUG3A_WARN"); w != "" {
		sdk.Logger().Warn(w)
	}
	if os.Getenv("PLUG3A_PANIC") == "1" {
		var settings map[string]string
		settings["region"] = "eu" // panics: assignment to entry in nil map
	}
	if os.Getenv("PLUG3A_EXIT") == "1" {
		os.Exit(1)
	}
	sdk.Serve(sdk.Plugins{Filter: builder{}})
}
