// Command hangplugin is a test service plugin, hang.Svc, whose Hang never
// returns (it ignores its context) and whose Ping answers "pong". With
// $START_DELAY (a Go duration) it sleeps that long before sdk.Serve, as a
// plugin with a slow start does.
package main

import (
	"context"
	"os"
	"time"

	"github.com/airnode/airnode/sdk"
)

type svc struct{}

// Hang blocks forever, whatever its context says.
func (svc) Hang(context.Context) error { select {} }

// Ping answers "pong".
func (svc) Ping(context.Context) (string, error) { return "pong", nil }

func main() {
	if d, err := time.ParseDuration(os.Getenv("START_DELAY")); err == nil {
		time.Sleep(d)
	}
	sdk.Serve(sdk.Plugins{Services: []sdk.Service{{Name: "hang.Svc", Impl: svc{}}}})
}
