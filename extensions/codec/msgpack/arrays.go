package msgpack

import (
	"io"
	"reflect"
	"sync"

	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// arrayInside reports whether the value about to be decoded into v puts
// an array where a struct below its top is read (a field, an element, a
// map's value: Items[0] of {"Items":[[]]} into struct{ Items []Item }),
// as arrayForStruct does for the top: msgpack would read [] as the zero
// struct, and one element per field as the fields in order. Structs that
// decode themselves (opaque: time.Time and its legacy [sec, nsec]) and
// those declared array-encoded (as_array) read their own arrays.
//
// A successful call pays one bool unless its body holds an array inside
// a container (lengthCheck.nested, found by the length walk every body in
// memory gets) and v's type a struct below its top (structBelow, once per
// type); only then is the value read, guided by the type, and the body
// set back where it was. A stream is not checked (msgpack reads it).
func (d *Decoder) arrayInside(v any) bool {
	if !d.check.nested || d.body == nil || d.check.start < 0 {
		return false
	}
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer || !structBelow(t.Elem()) {
		return false
	}
	if _, ok := d.body.(io.ByteScanner); !ok { // msgpack reads it through a buffer of its own
		return false
	}
	at, err := d.body.Seek(0, io.SeekCurrent)
	if err != nil {
		return false
	}
	found, _ := d.findArray(t.Elem(), 0) // an error: msgpack reports it where it is
	if _, err := d.body.Seek(at, io.SeekStart); err != nil {
		d.err = err // out of step: every later Decode fails
	}
	return found
}

// findArray reads the next value, decoded into t, and reports whether an
// array in it meets a struct that does not read its own (arrayInside).
func (d *Decoder) findArray(t reflect.Type, depth int) (bool, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	c, err := d.d.PeekCode()
	if err != nil || depth > MaxDepth {
		return false, err
	}
	array := msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32
	object := msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32
	switch k := t.Kind(); {
	case k == reflect.Interface || opaque(t):
	case k == reflect.Struct && array:
		if !asArray(t) {
			return true, nil
		}
	case k == reflect.Struct && object:
		n, err := d.d.DecodeMapLen()
		for i := 0; i < n && err == nil; i++ {
			var ft reflect.Type
			if ft, err = d.fieldType(t); err != nil {
				break
			}
			if ft == nil { // no such field: refit's
				err = d.d.Skip()
				continue
			}
			if found, ferr := d.findArray(ft, depth+1); found || ferr != nil {
				return found, ferr
			}
		}
		return false, err
	case (k == reflect.Slice || k == reflect.Array) && array:
		n, err := d.d.DecodeArrayLen()
		for i := 0; i < n && err == nil; i++ {
			if found, ferr := d.findArray(t.Elem(), depth+1); found || ferr != nil {
				return found, ferr
			}
		}
		return false, err
	case k == reflect.Map && object:
		n, err := d.d.DecodeMapLen()
		for i := 0; i < n && err == nil; i++ {
			if err = d.d.Skip(); err != nil { // the key
				break
			}
			if found, ferr := d.findArray(t.Elem(), depth+1); found || ferr != nil {
				return found, ferr
			}
		}
		return false, err
	}
	return false, d.d.Skip()
}

// fieldType reads a map key and returns the type of struct t's field it
// names, as Decode matches keys (msgpackNames.Field: exactly, else
// ignoring case); nil when it names none or is not a string. The key is
// read into the decoder's scratch buffer.
func (d *Decoder) fieldType(t reflect.Type) (reflect.Type, error) {
	c, err := d.d.PeekCode()
	if err != nil {
		return nil, err
	}
	if !msgpcode.IsFixedString(c) && c != msgpcode.Str8 && c != msgpcode.Str16 && c != msgpcode.Str32 {
		return nil, d.d.Skip()
	}
	n, err := d.d.DecodeBytesLen()
	if err != nil {
		return nil, err
	}
	if cap(d.key) < n {
		d.key = make([]byte, n)
	}
	d.key = d.key[:n]
	if err := d.d.ReadFull(d.key); err != nil {
		return nil, err
	}
	_, ft, _ := msgpackNames.Field(t, string(d.key))
	return ft, nil
}

// structsBelow remembers structBelow's answer per type (reflect.Type →
// bool).
var structsBelow sync.Map

// structBelow reports whether a value of type t can hold, below its top,
// a struct read from a map (neither opaque nor as_array): in a field, an
// element, a map's value, through pointers.
func structBelow(t reflect.Type) bool {
	if b, ok := structsBelow.Load(t); ok {
		return b.(bool)
	}
	b := holdsStruct(t, true, map[reflect.Type]bool{})
	structsBelow.Store(t, b)
	return b
}

func holdsStruct(t reflect.Type, top bool, seen map[reflect.Type]bool) bool {
	if t.Kind() != reflect.Interface && opaque(t) {
		return false
	}
	if t.Kind() == reflect.Struct && asArray(t) {
		return false // its fields are msgpack's to read from its array
	}
	if t.Kind() == reflect.Struct && !top {
		return true
	}
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer:
		return holdsStruct(t.Elem(), top, seen)
	case reflect.Slice, reflect.Array, reflect.Map:
		return holdsStruct(t.Elem(), false, seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); (f.IsExported() || f.Anonymous) && holdsStruct(f.Type, false, seen) {
				return true
			}
		}
	}
	return false
}
