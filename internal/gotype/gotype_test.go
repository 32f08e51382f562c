package gotype

import (
	"reflect"
	"testing"
)

type uint8s []uint8

type ptr *int

func TestStringWritesTypesAsGoProgrammersDo(t *testing.T) {
	cases := []struct {
		t    reflect.Type
		want string
	}{
		{reflect.TypeFor[[]byte](), "[]byte"},
		{reflect.TypeFor[[16]uint8](), "[16]byte"},
		{reflect.TypeFor[uint8](), "uint8"},
		{reflect.TypeFor[map[uint8][]uint8](), "map[uint8][]byte"},
		{reflect.TypeFor[[][]byte](), "[][]byte"},
		{reflect.TypeFor[any](), "any"},
		{reflect.TypeFor[map[string]any](), "map[string]any"},
		{reflect.TypeFor[[]any](), "[]any"},
		{reflect.TypeFor[func(any, []byte) (uint8, error)](), "func(any, []byte) (uint8, error)"},
		{reflect.TypeFor[interface{ M() }](), "interface { M() }"},
		{reflect.TypeFor[uint8s](), "gotype.uint8s"},
		{reflect.TypeFor[struct{ B []uint8 }](), "struct { B []byte }"},
		{nil, "nil"},
	}
	for _, c := range cases {
		if got := String(c.t); got != c.want {
			t.Errorf("String(%v) = %q, want %q", c.t, got, c.want)
		}
	}
}

func TestCleanLeavesOtherTextAlone(t *testing.T) {
	for in, want := range map[string]string{
		"Echo(context.Context, []uint8) ([]uint8, error)": "Echo(context.Context, []byte) ([]byte, error)",
		"a[]uint8x and []uint8_ stay":                     "a[]uint8x and []uint8_ stay",
		"no types here":                                   "no types here",
		"":                                                "",
	} {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTargetNamesWhatThePointersLeadTo(t *testing.T) {
	var p *[]uint8
	var named ptr
	cases := []struct {
		v    any
		want string
	}{
		{new(*struct{ X int }), "struct { X int }"},
		{new([]byte), "[]byte"},
		{p, "[]byte"},
		{new(any), "any"},
		{&named, "gotype.ptr"},
		{"not a pointer", "string"},
		{nil, "nil"},
	}
	for _, c := range cases {
		if got := Target(c.v); got != c.want {
			t.Errorf("Target(%T) = %q, want %q", c.v, got, c.want)
		}
	}
}
