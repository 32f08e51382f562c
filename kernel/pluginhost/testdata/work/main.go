// Command work is a service plugin for tests: acme.Work.Run(id, ms)
// appends id and a newline to the file named by $WORK_LOG, as the call
// starts, then sleeps ms milliseconds (or until the call's deadline) and
// returns the plugin's PID. A test reads the files to see which plugin
// process ran a call, and how many times.
package main

import (
	"context"
	"os"
	"time"

	"github.com/airnode/airnode/sdk"
)

// Work is the service.
type Work struct{}

// Run records id, then works for ms milliseconds.
func (Work) Run(ctx context.Context, id string, ms int) (int, error) {
	f, err := os.OpenFile(os.Getenv("WORK_LOG"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, err
	}
	_, err = f.WriteString(id + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	select {
	case <-time.After(time.Duration(ms) * time.Millisecond):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return os.Getpid(), nil
}

func main() { sdk.Serve(sdk.Plugins{Services: []sdk.Service{{Name: "acme.Work", Impl: Work{}}}}) }
