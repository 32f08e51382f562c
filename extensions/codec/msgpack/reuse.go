package msgpack

import (
	"bytes"
	"reflect"
	"sync"

	vm "github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/airnode/airnode/extensions/codec/internal/generic"
)

// A typed target reused for a second Decode (a Go consumer's reply
// variable, a struct made with values up front) may hold values in its
// interfaces: a struct{ V any } whose V is the map[string]any of an
// earlier reply. msgpack decodes into such a value in place
// (decodeInterfaceValue: DecodeValue(v.Elem())), which is not addressable:
// a map there panics (reflect.Value.Addr of unaddressable value), any other
// kind fails ("invalid code=81 decoding string/bytes length") or panics on
// its Set. encoding/json, the reference, decodes into the interface's value
// when it is a non-nil pointer and otherwise replaces it with the value
// read (nil for a null), keeping it when the value is absent.
//
// So before msgpack decodes a typed target, placeSlots puts a *slot in
// every empty interface inside it that holds a value: msgpack finds a
// non-nil pointer there and calls decodeSlot, registered for *slot, which
// reads the value into the slot (into the old value itself when it is a
// non-nil pointer); restoreSlots then puts back into each interface the
// value read, or the old value when none was read (an absent field). A
// non-empty interface (error, fmt.Stringer) cannot hold a *slot: one
// holding a non-pointer value is set to nil, as json replaces it (so it
// loses its value when absent). Maps are not walked: msgpack decodes every
// map value into a new element. A target whose interfaces are all nil (a
// fresh reply) pays one walk, only when its type may hold an interface.

// slot stands in an empty interface of a typed target for one Decode.
type slot struct {
	old any  // the interface's value before the Decode
	val any  // the value read, when set
	set bool // a value was read for this interface
}

// result returns what the interface holds after the Decode.
func (s *slot) result() any {
	if s.set {
		return s.val
	}
	return s.old
}

var typeOfSlot = reflect.TypeFor[*slot]()

// registerSlots installs, once per process, decodeSlot as msgpack's
// decoder of *slot (vm.Register; the type is this package's, so nothing
// else meets it), before the first slot is placed. A function and a bare
// sync.Once, not a sync.OnceFunc variable: decodeSlot uses the decoder
// pool, whose initialiser would then depend on itself.
func registerSlots() {
	slotsOnce.Do(func() { vm.Register((*slot)(nil), nil, decodeSlot) })
}

var slotsOnce sync.Once

// decodeSlot reads the next value for the slot at v: a nil sets the
// interface to nil; into a non-nil pointer it held, the value is decoded in
// place; else it is read generically, as into a nil interface. The value
// is decoded by a Decoder of its own over its bytes, so that the package's
// rules (generic integers, keys ignoring case, nil resets, these slots)
// apply inside it. Its unknown keys are ignored (a reply's leniency; a
// provider's arguments are fresh targets and meet no slot).
func decodeSlot(d *vm.Decoder, v reflect.Value) error {
	s := v.Interface().(*slot)
	raw, err := d.DecodeRaw()
	if err != nil {
		return err
	}
	s.set = true
	if len(raw) == 1 && raw[0] == msgpcode.Nil {
		s.val = nil
		return nil
	}
	again := Codec{}.NewDecoder(bytes.NewReader(raw)).(*Decoder)
	defer again.Release()
	if p := reflect.ValueOf(s.old); p.Kind() == reflect.Pointer && !p.IsNil() {
		s.val = s.old
		return again.Decode(s.old)
	}
	var x any
	err = again.Decode(&x)
	s.val = x
	return err
}

// placeSlots puts a *slot in every empty interface inside v (a settable
// value) holding a value, on the paths msgpack decodes in place, and
// appends each interface it filled to placed; see the comment at the top
// of this file.
func placeSlots(v reflect.Value, placed *[]reflect.Value) {
	if !generic.MayHoldInterface(v.Type(), opaque) {
		return
	}
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() || !v.CanSet() {
			return
		}
		e := v.Elem()
		if v.Type().NumMethod() == 0 {
			v.Set(reflect.ValueOf(&slot{old: e.Interface()}))
			*placed = append(*placed, v)
			return
		}
		if e.Kind() == reflect.Pointer && !e.IsNil() {
			placeSlots(e.Elem(), placed) // msgpack decodes into it in place
			return
		}
		v.SetZero()
	case reflect.Pointer:
		if !v.IsNil() {
			placeSlots(v.Elem(), placed)
		}
	case reflect.Slice:
		v = v.Slice(0, v.Cap()) // msgpack decodes into the elements up to the capacity
		fallthrough
	case reflect.Array:
		for i := range v.Len() {
			placeSlots(v.Index(i), placed)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				placeSlots(v.Field(i), placed)
			}
		}
	}
}

// restoreSlots replaces every *slot inside target by its result: those
// placed, and the copies msgpack made of them into a slice it grew (found
// by walking target as placeSlots does).
func restoreSlots(target reflect.Value, placed []reflect.Value) {
	restoreIn(target)
	for _, v := range placed {
		restoreIn(v)
	}
}

func restoreIn(v reflect.Value) {
	if !generic.MayHoldInterface(v.Type(), opaque) {
		return
	}
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() || !v.CanSet() {
			return
		}
		e := v.Elem()
		if e.Type() == typeOfSlot {
			if x := e.Interface().(*slot).result(); x == nil {
				v.SetZero()
			} else {
				v.Set(reflect.ValueOf(x))
			}
			return
		}
		if e.Kind() == reflect.Pointer && !e.IsNil() && v.Type().NumMethod() != 0 {
			restoreIn(e.Elem())
		}
	case reflect.Pointer:
		if !v.IsNil() {
			restoreIn(v.Elem())
		}
	case reflect.Slice:
		v = v.Slice(0, v.Cap())
		fallthrough
	case reflect.Array:
		for i := range v.Len() {
			restoreIn(v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				restoreIn(v.Field(i))
			}
		}
	}
}
