// Command panicker is a test plugin: it serves service acme.Calc, whose
// Boom method panics("kaboom") and whose Add adds.
package main

import (
	"context"

	"github.com/airnode/airnode/sdk"
)

type calc struct{}

func (calc) Boom(context.Context) (int, error) { panic("kaboom") }

func (calc) Add(a, b int) int { return a + b }

func main() { sdk.Serve(sdk.Plugins{Services: []sdk.Service{{Name: "acme.Calc", Impl: calc{}}}}) }
