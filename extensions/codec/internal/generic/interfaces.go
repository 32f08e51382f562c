// Package generic is what the json and msgpack codecs share about generic
// values, the map[string]any / []any trees a *any receives: rewriting the
// interface values inside a decoded typed target (FixInterfaces), and
// checking a generic map's keys against the fields of the struct it is
// decoded into (CheckFields), so both codecs number and name alike.
package generic

import (
	"reflect"
	"sync"
)

// mayHold caches MayHoldInterface by type.
var mayHold sync.Map // reflect.Type -> bool

// MayHoldInterface reports whether a value of type t can hold an interface
// value that a decoder fills generically: t is an interface, or a pointer,
// slice, array, map or struct (by its exported fields) leading to one. A type
// opaque(t) says decodes itself (json.Unmarshaler, msgpack's
// CustomDecoder) is not looked into. Results are cached per type.
func MayHoldInterface(t reflect.Type, opaque func(reflect.Type) bool) bool {
	if v, ok := mayHold.Load(t); ok {
		return v.(bool)
	}
	r := mayHoldInterface(t, opaque, map[reflect.Type]bool{})
	mayHold.Store(t, r)
	return r
}

func mayHoldInterface(t reflect.Type, opaque func(reflect.Type) bool, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false // a recursive type: its other paths answer
	}
	seen[t] = true
	if t.Kind() != reflect.Interface && opaque(t) {
		return false
	}
	switch t.Kind() {
	case reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return mayHoldInterface(t.Elem(), opaque, seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && mayHoldInterface(f.Type, opaque, seen) {
				return true
			}
		}
	}
	return false
}

// FixInterfaces replaces every non-nil interface value inside v (a settable
// value, the target a decoder filled) by fix's result: fix sees the generic
// value as decoded and returns it as the codec promises it (json.Number as
// int64, say), or an error, which FixInterfaces returns. Only the paths
// MayHoldInterface allows are walked.
func FixInterfaces(v reflect.Value, opaque func(reflect.Type) bool, fix func(any) (any, error)) error {
	if !MayHoldInterface(v.Type(), opaque) {
		return nil
	}
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return nil
		}
		e := v.Elem()
		if e.Kind() == reflect.Pointer && !e.IsNil() { // a value the caller set: decoded into in place
			return FixInterfaces(e.Elem(), opaque, fix)
		}
		x, err := fix(e.Interface())
		if err != nil {
			return err
		}
		if x != nil && reflect.TypeOf(x).AssignableTo(v.Type()) && v.CanSet() {
			v.Set(reflect.ValueOf(x))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			return FixInterfaces(v.Elem(), opaque, fix)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if err := FixInterfaces(v.Index(i), opaque, fix); err != nil {
				return err
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(it.Value())
			if err := FixInterfaces(e, opaque, fix); err != nil {
				return err
			}
			v.SetMapIndex(it.Key(), e)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				if err := FixInterfaces(v.Field(i), opaque, fix); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
