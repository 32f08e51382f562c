// Package gotype names Go types in error messages as a Go programmer
// writes them, not as package reflect prints them: []byte, not []uint8;
// any, not interface {}. The kernel's argument errors and the codecs use
// it, so one type reads the same in every message. Its functions are pure
// and safe for concurrent use.
package gotype

import (
	"reflect"
	"strconv"
	"strings"
	"time"
)

// String returns t as a Go programmer writes it: reflect's t.String() with
// the element type uint8 of a slice or array written byte ([]byte,
// [16]byte, map[string][]byte; a lone uint8 stays uint8) and the empty
// interface written any (map[string]any, func(any) error). A nil t is
// "nil".
func String(t reflect.Type) string {
	if t == nil {
		return "nil"
	}
	return Clean(t.String())
}

// Clean rewrites s, a type as reflect prints it (inside a longer text
// too), as String does.
func Clean(s string) string {
	if !strings.Contains(s, "]uint8") && !strings.Contains(s, "interface {}") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "]uint8") && !identByte(s, i+len("]uint8")):
			b.WriteString("]byte")
			i += len("]uint8")
		case strings.HasPrefix(s[i:], "interface {}"):
			b.WriteString("any")
			i += len("interface {}")
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String()
}

// identByte reports whether s[i] continues an identifier (uint8x is
// another name than uint8).
func identByte(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	c := s[i]
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// Target names what Decode(v) fills, v a pointer as a codec's Decode gets
// it: the type at the end of v's pointers, as String writes it, so a
// **wrapperspb.StringValue (the kernel decoding a *wrapperspb.StringValue
// parameter) is wrapperspb.StringValue and a *[]uint8 is []byte. A nil v
// is "nil".
func Target(v any) string {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer && t.Name() == "" {
		t = t.Elem()
	}
	return String(t)
}

var typeOfTime = reflect.TypeFor[time.Time]()

// Want returns what a value decoded into t must be, with its article, in
// the words of a JSON or MessagePack sender (spi.Mismatch.Want): "a
// string", "an integer", "a number", "a bool", "base64 bytes", "an array
// of main.Item", "an object with main.Item's fields", "an object of int32
// values" (a map), "an RFC 3339 time or a timestamp"; a pointer wants
// what its element wants, an interface "any value" (with methods: "a
// value of <t>"). A nil t is "any value".
func Want(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "any value"
	}
	switch t.Kind() {
	case reflect.Interface:
		if t.NumMethod() == 0 {
			return "any value"
		}
		return "a value of " + String(t)
	case reflect.Bool:
		return "a bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "base64 bytes"
		}
		if t.Kind() == reflect.Array {
			return "an array of at most " + strconv.Itoa(t.Len()) + " " + String(t.Elem())
		}
		return "an array of " + String(t.Elem())
	case reflect.Map:
		return "an object of " + String(t.Elem()) + " values"
	case reflect.Struct:
		if t == typeOfTime {
			return "an RFC 3339 time or a timestamp"
		}
		return "an object with " + String(t) + "'s fields"
	}
	return "a value of " + String(t) + ", which no codec decodes"
}
