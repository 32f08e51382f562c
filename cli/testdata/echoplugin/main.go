// Command echoplugin is a test service plugin serving demo.Echo, the
// built-in service's name: serve must refuse to export both. With
// $SERVICE_NAME it serves that name instead (airnode.Health, say).
package main

import (
	"context"
	"os"

	"github.com/airnode/airnode/sdk"
)

type echo struct{}

// Echo returns its argument.
func (echo) Echo(_ context.Context, v any) (any, error) { return v, nil }

func main() {
	name := os.Getenv("SERVICE_NAME")
	if name == "" {
		name = "demo.Echo"
	}
	sdk.Serve(sdk.Plugins{Services: []sdk.Service{{Name: name, Impl: echo{}}}})
}
