// Package gotype names Go types in error messages as a Go programmer
// writes them, not as package reflect prints them: []byte, not []uint8;
// any, not interface {}. The kernel's argument errors and the codecs use
// it, so one type reads the same in every message. Its functions are pure
// and safe for concurrent use.
package gotype

import (
	"reflect"
	"strings"
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
