// Command noctxplugin is a test service plugin, noctx.Svc, with one method
// that takes a context.Context first (Hello) and one that does not
// (Count): airnode plugin check must warn about Count only.
package main

import (
	"context"

	"github.com/airnode/airnode/sdk"
)

type svc struct{}

// Hello answers "Hello, <name>".
func (svc) Hello(_ context.Context, name string) (string, error) { return "Hello, " + name, nil }

// Count answers 1; it takes no context, which plugin check warns about.
func (svc) Count() int { return 1 }

func main() { sdk.Serve(sdk.Plugins{Services: []sdk.Service{{Name: "noctx.Svc", Impl: svc{}}}}) }
