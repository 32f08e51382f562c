// Command badmethods is a test service plugin, nu.S2, whose Impl is a
// value with methods no call can use: Chan takes a chan, Hook returns a
// struct holding a func, PtrOnly has a pointer receiver (left out of the
// value's methods), Sum is variadic (skipped by the sdk). Hello works.
// airnode plugin check must warn about the four.
package main

import (
	"context"

	"github.com/airnode/airnode/sdk"
)

// S is the service.
type S struct{}

// Hooks holds a func, which no codec can carry.
type Hooks struct {
	Name    string
	OnClose func()
}

// Chan takes a chan.
func (S) Chan(_ context.Context, c chan int) error { return nil }

// Hook returns a struct holding a func.
func (S) Hook(context.Context) (Hooks, error) { return Hooks{Name: "h"}, nil }

// Hello answers "Hello, <name>".
func (S) Hello(_ context.Context, name string) (string, error) { return "Hello, " + name, nil }

// Sum is variadic.
func (S) Sum(_ context.Context, xs ...int) (int, error) { return len(xs), nil }

// PtrOnly is on the pointer receiver.
func (*S) PtrOnly(context.Context) (int, error) { return 1, nil }

func main() { sdk.Serve(sdk.Plugins{Services: []sdk.Service{{Name: "nu.S2", Impl: S{}}}}) }
