package sdk

import (
	"encoding"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/vmihailenco/msgpack/v5"
)

// implWarnings returns the problems of a service's Impl that make its
// calls fail or its methods go missing, one sentence each, sorted by
// method (pluginrpc.ServiceDesc.Warnings, which `airnode plugin check`
// prints): an argument or result whose type holds a chan, a func or an
// unsafe.Pointer, which neither codec (msgpack, json) can carry, so
// that every call fails (BAD_REQUEST: cannot decode into chan int); and
// methods that only the pointer type has when Impl is a value, which are
// not served at all (SERVICE_NOT_FOUND: no method).
func implWarnings(service string, impl any, methods map[string]*method) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(methods)) {
		m := methods[name]
		for i, p := range m.params {
			if bad, why := uncodable(p, false); bad {
				out = append(out, fmt.Sprintf("%s.%s argument %d has type %s%s, which no codec can carry: every call of it fails BAD_REQUEST; use a type of data (numbers, strings, slices, maps, structs)",
					service, name, i, p, why))
			}
		}
		if ft := m.fn.Type(); m.value {
			r := ft.Out(0)
			if bad, why := uncodable(r, true); bad {
				out = append(out, fmt.Sprintf("%s.%s result has type %s%s, which no codec can carry: every call of it fails SERIALIZATION_ERROR; return a type of data (numbers, strings, slices, maps, structs)",
					service, name, r, why))
			}
		}
	}
	t := reflect.TypeOf(impl)
	if t.Kind() != reflect.Pointer {
		pt := reflect.PointerTo(t)
		var missing []string
		for i := range pt.NumMethod() {
			if m := pt.Method(i); m.IsExported() {
				if _, ok := t.MethodByName(m.Name); !ok {
					missing = append(missing, m.Name)
				}
			}
		}
		if len(missing) > 0 {
			out = append(out, fmt.Sprintf("%s: %s of %s %s a pointer receiver, and Impl is a %s value, whose methods leave them out: they are not served (SERVICE_NOT_FOUND); pass Impl: &%s{...}",
				service, strings.Join(missing, ", "), t, hasHave(len(missing)), t, t))
		}
	}
	return out
}

// hasHave is "has" for one, "have" for more.
func hasHave(n int) string {
	if n == 1 {
		return "has"
	}
	return "have"
}

var (
	jsonMarshaler    = reflect.TypeFor[json.Marshaler]()
	jsonUnmarshaler  = reflect.TypeFor[json.Unmarshaler]()
	textMarshaler    = reflect.TypeFor[encoding.TextMarshaler]()
	binaryMarshaler  = reflect.TypeFor[encoding.BinaryMarshaler]()
	msgpackMarshaler = reflect.TypeFor[msgpack.Marshaler]()
	msgpackEncoder   = reflect.TypeFor[msgpack.CustomEncoder]()
)

// customCodec reports whether t (or *t) encodes itself, so that its
// fields do not matter.
func customCodec(t reflect.Type) bool {
	for _, i := range []reflect.Type{jsonMarshaler, jsonUnmarshaler, textMarshaler, binaryMarshaler, msgpackMarshaler, msgpackEncoder} {
		if t.Implements(i) || t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(i) {
			return true
		}
	}
	return false
}

// uncodable reports whether some value of t cannot be carried by the
// codecs, and where in t: "" for t itself (a chan, func or
// unsafe.Pointer), " (its field Out is a chan int)" for a part of it.
// A field tagged msgpack:"-" is skipped; one tagged json:"-" only in an
// argument (decoded by airnode's codecs, which read json tags), not in a
// result (encoded by msgpack.Marshal, which does not).
func uncodable(t reflect.Type, result bool) (bool, string) {
	bad, path := find(t, "", result, map[reflect.Type]bool{})
	if !bad || path == "" {
		return bad, ""
	}
	return true, " (" + path + ")"
}

// find walks t, whose place in the outer type is path ("" for the outer
// type itself): true and the place of the first part that is a chan, a
// func or an unsafe.Pointer ("its field Out is a chan int"; "" when t
// is one), false when every value of it can be carried. seen breaks
// recursive types.
func find(t reflect.Type, path string, result bool, seen map[reflect.Type]bool) (bool, string) {
	switch t.Kind() {
	case reflect.Chan, reflect.Func, reflect.UnsafePointer:
		if path == "" {
			return true, ""
		}
		return true, fmt.Sprintf("its %s is a %s", path, t)
	case reflect.Interface:
		return false, ""
	}
	if seen[t] || customCodec(t) {
		return false, ""
	}
	seen[t] = true
	defer delete(seen, t)
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return find(t.Elem(), join(path, "element"), result, seen)
	case reflect.Map:
		if bad, w := find(t.Key(), join(path, "key"), result, seen); bad {
			return bad, w
		}
		return find(t.Elem(), join(path, "value"), result, seen)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous || f.Tag.Get("msgpack") == "-" || !result && f.Tag.Get("json") == "-" {
				continue
			}
			if bad, w := find(f.Type, join(path, "field "+f.Name), result, seen); bad {
				return bad, w
			}
		}
	}
	return false, ""
}

func join(path, part string) string {
	if path == "" {
		return part
	}
	return path + " " + part
}
