// Command narrow is a test plugin: it serves service acme.Narrow, whose
// methods take integer parameters narrower than what a consumer may send.
package main

import (
	"context"

	"github.com/airnode/airnode/sdk"
)

type narrow struct{}

// Add adds.
func (narrow) Add(_ context.Context, a, b int) (int, error) { return a + b, nil }

// U64 returns a.
func (narrow) U64(_ context.Context, a uint64) (uint64, error) { return a, nil }

// I8 returns a.
func (narrow) I8(_ context.Context, a int8) (int8, error) { return a, nil }

// Wide returns n, for a consumer reading it into a narrower integer.
func (narrow) Wide(_ context.Context, n int64) (int64, error) { return n, nil }

func main() {
	sdk.Serve(sdk.Plugins{Services: []sdk.Service{{Name: "acme.Narrow", Impl: narrow{}}}})
}
