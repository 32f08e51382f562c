// Command oddtypes is a test plugin: it serves service acme.Odd, whose
// methods take types that only null (or an empty map) fills: an
// interface with methods, a complex number, a chan, a map keyed by a
// struct, an array, a float or a bool; return types that no codec
// encodes; one variadic method, Sum, which the sdk skips; and methods
// whose odd-looking types do work (error, fmt.Stringer, maps keyed by
// integers, netip.Addr, *string, any), which must not be warned about.
package main

import (
	"context"
	"fmt"
	"io"
	"net/netip"

	"github.com/airnode/airnode/sdk"
)

// Key is a struct used as a map key.
type Key struct{ A, B int }

// Holder has a field of an interface type with methods.
type Holder struct {
	N int
	R io.Reader
}

// Hooks holds a func.
type Hooks struct{ F func() }

type odd struct{}

// Arguments that no decoded value fills but null (an empty map).

func (odd) Reader(_ context.Context, r io.Reader) (bool, error)        { return r == nil, nil }
func (odd) Held(_ context.Context, h Holder) (int, error)              { return h.N, nil }
func (odd) Cplx(_ context.Context, c complex64) (bool, error)          { return c == 0, nil }
func (odd) Cplx128(_ context.Context, c complex128) (bool, error)      { return c == 0, nil }
func (odd) Chan(_ context.Context, c chan int) (bool, error)           { return c == nil, nil }
func (odd) StructKey(_ context.Context, m map[Key]int) (int, error)    { return len(m), nil }
func (odd) ArrayKey(_ context.Context, m map[[2]int]int) (int, error)  { return len(m), nil }
func (odd) FloatKey(_ context.Context, m map[float64]int) (int, error) { return len(m), nil }
func (odd) BoolKey(_ context.Context, m map[bool]int) (int, error)     { return len(m), nil }

// Results that no codec encodes.

func (odd) CplxResult(context.Context) (complex128, error) { return 0, nil }
func (odd) ChanResult(context.Context) (chan int, error)   { return nil, nil }
func (odd) HooksResult(context.Context) (Hooks, error)     { return Hooks{}, nil }

// Variadic: skipped.

func (odd) Sum(_ context.Context, xs ...int) (int, error) { return len(xs), nil }

// Odd-looking types that work.

func (odd) Ok(_ context.Context, s string) (string, error)           { return s, nil }
func (odd) ErrArg(_ context.Context, e error) (string, error)        { return fmt.Sprint(e), nil }
func (odd) Stringer(_ context.Context, s fmt.Stringer) (bool, error) { return s != nil, nil }
func (odd) IntKey(_ context.Context, m map[int]int) (int, error)     { return m[1], nil }
func (odd) UintKey(_ context.Context, m map[uint8]int) (int, error)  { return m[1], nil }
func (odd) AddrKey(_ context.Context, m map[netip.Addr]int) (int, error) {
	return m[netip.MustParseAddr("10.0.0.1")], nil
}
func (odd) PtrKey(_ context.Context, m map[*string]int) (int, error) { return len(m), nil }
func (odd) AnyKey(_ context.Context, m map[any]int) (int, error)     { return m["x"], nil }
func (odd) ReaderResult(context.Context) (io.Reader, error)          { return nil, nil }

func main() { sdk.Serve(sdk.Plugins{Services: []sdk.Service{{Name: "acme.Odd", Impl: odd{}}}}) }
