package msgpack

import (
	"reflect"
	"sync"

	vm "github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// nilInto reads a nil about to be decoded into the typed target v (a
// non-nil pointer) by setting *v to its zero value, as encoding/json reads
// null into a slice, map, pointer or interface: a reply variable that
// held a value from an earlier call (or an empty slice made up front)
// becomes nil, where msgpack left a *[]string as it was. It reports
// whether it consumed the value; anything else (not a nil, no value left,
// a target that is not a non-nil pointer) is left to msgpack.
func (d *Decoder) nilInto(v any) (bool, error) {
	if c, err := d.d.PeekCode(); err != nil || c != msgpcode.Nil {
		return false, nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return false, nil
	}
	if err := d.d.DecodeNil(); err != nil {
		return true, err
	}
	rv.Elem().SetZero()
	return true, nil
}

// registerStringSlices installs, once per process, decodeStringSlice as
// msgpack's decoder of []string (vm.Register: the library's process-wide
// table of decoders by type), so that a nil read into a []string inside a
// typed target — a struct field, a map value, an array element — sets it
// to nil as a nil does for every other slice type in msgpack. Without it,
// msgpack's fast path for []string returns on a nil and leaves the field
// as it was: a struct reused as a reply kept its previous Tags, and one
// made with Tags: []string{} kept it empty. Named types whose elements are
// strings (type Tags []string) still take that fast path; the top level of
// a Decode is nilInto's, whatever the type.
var registerStringSlices = sync.OnceFunc(func() {
	vm.Register([]string(nil), nil, decodeStringSlice)
})

// decodeStringSlice decodes a []string at v: a nil sets it to nil, an
// array goes to msgpack's own []string decoding (through a *[]string at
// the top level of its Decode, which does not consult the registered
// decoders, so this does not recurse).
func decodeStringSlice(d *vm.Decoder, v reflect.Value) error {
	c, err := d.PeekCode()
	if err != nil {
		return err
	}
	if c == msgpcode.Nil {
		v.SetZero()
		return d.DecodeNil()
	}
	if v.CanAddr() {
		return d.Decode(v.Addr().Interface())
	}
	var s []string
	if err := d.Decode(&s); err != nil {
		return err
	}
	v.Set(reflect.ValueOf(s))
	return nil
}
