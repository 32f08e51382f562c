// Command echoplugin is a test service plugin serving demo.Echo, the
// built-in service's name: serve must refuse to export both.
package main

import (
	"context"

	"github.com/airnode/airnode/sdk"
)

type echo struct{}

// Echo returns its argument.
func (echo) Echo(_ context.Context, v any) (any, error) { return v, nil }

func main() { sdk.Serve(sdk.Plugins{Services: []sdk.Service{{Name: "demo.Echo", Impl: echo{}}}}) }
