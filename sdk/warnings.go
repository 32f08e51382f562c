package sdk

import (
	"encoding"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/airnode/airnode/internal/gotype"
)

// implWarnings returns the problems of a service's Impl that make its
// calls fail or its methods go missing, one sentence each, sorted by
// method (pluginrpc.ServiceDesc.Warnings, which `airnode plugin check`
// prints): an argument type that no decoded value fills (a chan, a func,
// an unsafe.Pointer or a complex number, which neither codec, msgpack or
// json, carries; an interface with methods, such as io.Reader; a map
// whose keys, which airnode's consumers send as strings, no key of its
// type takes, such as a struct), so that any call sending a value there
// fails BAD_REQUEST (null, or an empty map, passes); a result type that
// neither codec encodes, so that a call returning one fails
// SERIALIZATION_ERROR; the methods skipped (reflectMethods: variadic),
// which are not served (SERVICE_NOT_FOUND); and methods that only the
// pointer type has when Impl is a value, which are not served either.
func implWarnings(service string, impl any, methods map[string]*method, skipped map[string]string) []string {
	byMethod := map[string][]string{}
	for name, why := range skipped {
		byMethod[name] = append(byMethod[name], fmt.Sprintf("%s.%s is not served (a call of it is SERVICE_NOT_FOUND): %s", service, name, why))
	}
	for name, m := range methods {
		for i, p := range m.params {
			if f := find(p, "", false, map[reflect.Type]bool{}); f != nil {
				byMethod[name] = append(byMethod[name], fmt.Sprintf("%s.%s argument %d has type %s%s: any call that sends %s there fails BAD_REQUEST; %s",
					service, name, i, gotype.String(p), f.where(), f.sends, f.fix))
			}
		}
		if ft := m.fn.Type(); m.value {
			r := ft.Out(0)
			if f := find(r, "", true, map[reflect.Type]bool{}); f != nil {
				fails := "every call that returns without an error fails SERIALIZATION_ERROR"
				if f.path != "" {
					fails = "any call whose result holds one, even a nil one, fails SERIALIZATION_ERROR"
				}
				byMethod[name] = append(byMethod[name], fmt.Sprintf("%s.%s result has type %s%s: %s; return a type of data (numbers, strings, slices, maps, structs)",
					service, name, gotype.String(r), f.where(), fails))
			}
		}
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(byMethod)) {
		out = append(out, byMethod[name]...)
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

var timeType = reflect.TypeFor[time.Time]()

// flaw is the part of an argument or result type that makes calls fail
// (find).
type flaw struct {
	path  string       // where in the outer type: "" for itself, "field R", "element field F"
	part  reflect.Type // the part's type
	why   string       // what is wrong with it: "which no codec can carry"
	sends string       // what a call must send there to fail: "a non-null value"
	fix   string       // what to declare instead
}

const dataFix = "use a type of data (numbers, strings, slices, maps, structs)"

// where is ", which no codec can carry" for the outer type itself,
// " (its field R is an io.Reader, an interface with methods, which no
// decoded value has)" for a part of it.
func (f *flaw) where() string {
	if f.path == "" {
		return ", " + f.why
	}
	ts := gotype.String(f.part)
	return fmt.Sprintf(" (its %s is %s %s, %s)", f.path, article(ts), ts, f.why)
}

// article is "an" before a vowel, else "a".
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiouAEIOU", rune(word[0])) {
		return "an"
	}
	return "a"
}

// find walks t, whose place in the outer type is path ("" for the outer
// type itself), and returns its first flaw, nil when every value of it
// can be carried. In an argument (result false), decoded by the codecs
// from what a consumer sent: a chan, func, unsafe.Pointer or complex
// number (neither codec decodes one; null passes); an interface with
// methods that no decoded value has, all but error (a string decodes into
// it) and those time.Time has (msgpack decodes its timestamps so); a map
// whose key type takes no string (airnode's consumers send every map key
// as a string, and the codecs read one into string, integer and
// encoding.TextUnmarshaler keys only; an empty map passes). In a result,
// encoded by msgpack.Marshal: a chan, func, unsafe.Pointer or complex
// number (nil or not). A field tagged msgpack:"-" is skipped; one tagged
// json:"-" only in an argument (decoded by airnode's codecs, which read
// json tags), not in a result (msgpack.Marshal does not). seen breaks
// recursive types.
func find(t reflect.Type, path string, result bool, seen map[reflect.Type]bool) *flaw {
	switch t.Kind() {
	case reflect.Chan, reflect.Func, reflect.UnsafePointer, reflect.Complex64, reflect.Complex128:
		return &flaw{path: path, part: t, why: "which no codec can carry", sends: "a non-null value", fix: dataFix}
	case reflect.Interface:
		if result || t.NumMethod() == 0 || t == errType || timeType.Implements(t) {
			return nil
		}
		return &flaw{path: path, part: t, why: "an interface with methods, which no decoded value has", sends: "a non-null value", fix: "declare a concrete type, or any"}
	}
	if seen[t] || customCodec(t) {
		return nil
	}
	seen[t] = true
	defer delete(seen, t)
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return find(t.Elem(), join(path, "element"), result, seen)
	case reflect.Map:
		if !result && !stringKey(t.Key()) {
			return &flaw{path: path, part: t, why: fmt.Sprintf("whose %s keys cannot be read from the strings consumers send as map keys", gotype.String(t.Key())),
				sends: "a non-empty map", fix: "use a map keyed by strings, integers or an encoding.TextUnmarshaler type"}
		}
		if f := find(t.Key(), join(path, "key"), result, seen); f != nil {
			return f
		}
		return find(t.Elem(), join(path, "value"), result, seen)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous || f.Tag.Get("msgpack") == "-" || !result && f.Tag.Get("json") == "-" {
				continue
			}
			if fl := find(f.Type, join(path, "field "+f.Name), result, seen); fl != nil {
				return fl
			}
		}
	}
	return nil
}

// stringKey reports whether the codecs decode a map key sent as a string
// into a key of type k: a string, an integer (from its decimal text), a
// type that decodes itself (encoding.TextUnmarshaler, customCodec), any
// or error, or a pointer to one.
func stringKey(k reflect.Type) bool {
	for k.Kind() == reflect.Pointer && !customCodec(k) {
		k = k.Elem()
	}
	switch k.Kind() {
	case reflect.Interface:
		return k.NumMethod() == 0 || k == errType // any takes the string itself, error a string too
	case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return customCodec(k)
}

func join(path, part string) string {
	if path == "" {
		return part
	}
	return path + " " + part
}
