package jsonwire

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A Go string may hold any bytes; JSON carries UTF-8 text, and
// encoding/json writes each byte that is not UTF-8 as \ufffd, so a typed
// consumer's "caf\xe9" arrived as "caf\uFFFD" with no error, where msgpack
// and protobuf carry the bytes and `airnode call` refuses such input
// naming its offset. The encoder now refuses it too: encoding/json writes
// a value's whole text with one Write, and utf8Writer looks in it for the
// escape \ufffd, which encoding/json writes only for such a byte (a U+FFFD
// in the string is written as its UTF-8 bytes, a backslash as \\). Only
// then is the value walked to name where the byte is (invalidUTF8). The
// look costs one bytes.Index over the text (BenchmarkEncodeUTF8Check).

// errReplaced is utf8Writer's refusal of a text holding \ufffd.
var errReplaced = errors.New("text holds \\ufffd")

// utf8Writer passes encoding/json's texts to w, except one holding the
// escape \ufffd, which it keeps in bad and refuses with errReplaced.
type utf8Writer struct {
	w   io.Writer
	bad []byte
}

func (u *utf8Writer) Write(p []byte) (int, error) {
	if replaced(p) {
		u.bad = append(u.bad[:0], p...)
		return 0, errReplaced
	}
	return u.w.Write(p)
}

var escapeFFFD = []byte(`\ufffd`)

// replaced reports whether p, a JSON text, holds the escape \ufffd (a
// backslash preceded by an even number of backslashes, so not the text
// `\\ufffd`, an escaped backslash followed by "ufffd").
func replaced(p []byte) bool {
	for i := 0; ; {
		j := bytes.Index(p[i:], escapeFFFD)
		if j < 0 {
			return false
		}
		j += i
		n := 0
		for k := j - 1; k >= 0 && p[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return true
		}
		i = j + 1
	}
}

// invalidUTF8 returns where the first string in v holding bytes that are
// not UTF-8 is, in the order encoding/json writes v (struct fields in
// order, map keys sorted): "Order.customer: invalid UTF-8 at byte offset
// 3 (0xe9)"; "" when there is none (a MarshalJSON wrote \ufffd itself).
// A type with its own MarshalJSON is not looked into; one with
// MarshalText is checked by its text.
func invalidUTF8(v any) string {
	if v == nil {
		return ""
	}
	rv := reflect.ValueOf(v)
	return findInvalid(rv, rootName(rv.Type()), 0)
}

var (
	typeOfJSONMarshaler = reflect.TypeFor[json.Marshaler]()
	typeOfTextMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// rootName is how a path starts: v's type name without its package
// ("Order"), or "" for an unnamed or predeclared type (a path then
// starts at "[0]", or is the offset alone).
func rootName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer && t.Name() == "" {
		t = t.Elem()
	}
	if t.PkgPath() == "" {
		return ""
	}
	return t.Name()
}

func findInvalid(v reflect.Value, path string, depth int) string {
	if !v.IsValid() || depth > 10000 {
		return ""
	}
	t := v.Type()
	if t.Implements(typeOfJSONMarshaler) {
		return ""
	}
	if t.Implements(typeOfTextMarshaler) && t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface {
		if b, err := v.Interface().(encoding.TextMarshaler).MarshalText(); err == nil {
			return badAt(path, string(b))
		}
		return ""
	}
	switch v.Kind() {
	case reflect.String:
		return badAt(path, v.String())
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return findInvalid(v.Elem(), path, depth+1)
		}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "" // base64
		}
		for i := range v.Len() {
			if s := findInvalid(v.Index(i), path+"["+strconv.Itoa(i)+"]", depth+1); s != "" {
				return s
			}
		}
	case reflect.Map:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		for _, k := range keys {
			if k.Kind() == reflect.String {
				if s := badAt(path+" key "+strconv.Quote(k.String()), k.String()); s != "" {
					return s
				}
			}
			if s := findInvalid(v.MapIndex(k), path+"["+strconv.Quote(fmt.Sprint(k))+"]", depth+1); s != "" {
				return s
			}
		}
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			p := path + "." + name
			if f.Anonymous && f.Tag.Get("json") == "" {
				p = path // its fields are the outer struct's
			}
			if s := findInvalid(v.Field(i), p, depth+1); s != "" {
				return s
			}
		}
	}
	return ""
}

// badAt returns "path: invalid UTF-8 at byte offset N (0xXX)" for the
// first byte of s that is not UTF-8, or "" when s is UTF-8.
func badAt(path, s string) string {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			if path != "" {
				path += ": "
			}
			return fmt.Sprintf("%sinvalid UTF-8 at byte offset %d (0x%02x)", path, i, s[i])
		}
		i += n
	}
	return ""
}
