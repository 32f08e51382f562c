// Command echo is a service plugin serving demo.Echo's Echo for
// measurements with the real binary (airnode serve with a plugins.yaml
// entry for it, airnode bench across two such providers, kill -9 of one
// plugin): Echo returns its argument after $ECHO_DELAY (a Go duration,
// default 0), so that calls are in the plugin when it is killed.
package main

import (
	"context"
	"os"
	"time"

	"github.com/airnode/airnode/sdk"
)

// Echo is the service.
type Echo struct{ delay time.Duration }

// Echo returns v after the delay (or the call's deadline).
func (e Echo) Echo(ctx context.Context, v any) (any, error) {
	if e.delay > 0 {
		select {
		case <-time.After(e.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return v, nil
}

func main() {
	delay, _ := time.ParseDuration(os.Getenv("ECHO_DELAY"))
	sdk.Serve(sdk.Plugins{Services: []sdk.Service{{Name: "demo.Echo", Impl: Echo{delay: delay}}}})
}
