package jsonwire

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"

	"github.com/airnode/airnode/extensions/codec/internal/generic"
	"github.com/airnode/airnode/internal/gotype"
	"github.com/airnode/airnode/spi"
)

// encoding/json's *UnmarshalTypeError names a Go struct field path without
// element indexes or map keys ("AvOrder.Items.Qty") and no value. After
// one, Decode reads the value again from the body in memory, walks it
// against the target's type to the first place that type refuses and
// returns a *MismatchError saying where, what was wanted and what was
// sent (spi.Mismatched), with the same words as msgpack's. A good call
// never runs it.

// MismatchError is a Decode error for a value, or a part of it, that its
// type there cannot hold. Error() is "json: decode into main.Order: at
// Items: want an array of main.Item, got a map ({"SKU":"x"})"; it unwraps
// to encoding/json's *UnmarshalTypeError.
type MismatchError struct {
	// Target is the type decoded into, as gotype.Target names it.
	Target string
	// M says where, what was wanted and what was sent.
	M spi.Mismatch
	// Err is encoding/json's error.
	Err error
}

// Error returns "json: decode into <target>: " and the spi.Mismatch's text.
func (e *MismatchError) Error() string { return "json: decode into " + e.Target + ": " + e.M.String() }

// Got returns the spi.Mismatch's text without "want", for spi.TypeMismatch.
func (e *MismatchError) Got() string {
	s := e.M.Kind
	if e.M.Value != "" {
		s += " (" + e.M.Value + ")"
	}
	return s
}

// Mismatch returns where, what the type there wants and what was sent.
func (e *MismatchError) Mismatch() spi.Mismatch { return e.M }

// Unwrap returns encoding/json's error.
func (e *MismatchError) Unwrap() error { return e.Err }

var (
	_ spi.Mismatched   = (*MismatchError)(nil)
	_ spi.TypeMismatch = (*MismatchError)(nil)
)

// mismatchError reads again the value encoding/json refused with err into
// v (it lies between before and the input offset now) and returns the
// *MismatchError for the first place v's type refuses it; nil when the
// body is not in memory or the walk finds nothing (err is then kept).
func (d *Decoder) mismatchError(v any, before int64, err error) *MismatchError {
	t := reflect.TypeOf(v)
	if d.body == nil || t == nil || t.Kind() != reflect.Pointer {
		return nil
	}
	raw := make([]byte, d.d.InputOffset()-before)
	if _, rerr := d.body.ReadAt(raw, d.start+before); rerr != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var x any
	if dec.Decode(&x) != nil {
		return nil
	}
	x, xerr := exact(x)
	if xerr != nil {
		return nil
	}
	m, ok := walk(x, t.Elem(), "", 0)
	if !ok {
		return nil
	}
	return &MismatchError{Target: gotype.Target(v), M: m, Err: err}
}

// maxDepth bounds walk's recursion, as encoding/json bounds nesting.
const maxDepth = 10000

// walk returns the first place in x, a generic value (exact's), that t
// refuses as encoding/json does: a kind t does not take, a fraction or an
// integer out of range for an integer type, an array longer than a Go
// array; struct keys and map keys in sorted order. Types that decode
// themselves (opaque) are not looked into; a null fits everything.
func walk(x any, t reflect.Type, path string, depth int) (spi.Mismatch, bool) {
	if x == nil || depth > maxDepth {
		return spi.Mismatch{}, false
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if opaque(t) {
		return spi.Mismatch{}, false
	}
	kind, value := generic.Describe(x)
	here := spi.Mismatch{Path: path, Want: gotype.Want(t), Kind: kind, Value: value}
	switch t.Kind() {
	case reflect.Interface:
		if t.NumMethod() == 0 {
			return spi.Mismatch{}, false
		}
		here.Why = gotype.String(t) + " is an interface with methods, which no decoded value has (declare a concrete type, or any)"
		return here, true
	case reflect.Bool:
		if _, ok := x.(bool); ok {
			return spi.Mismatch{}, false
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		switch n := x.(type) {
		case int64:
			if t.Bits() == 64 || n == n<<(64-t.Bits())>>(64-t.Bits()) {
				return spi.Mismatch{}, false
			}
			lim := int64(1) << (t.Bits() - 1)
			here.Want = "an integer in " + strconv.FormatInt(-lim, 10) + ".." + strconv.FormatInt(lim-1, 10)
		case uint64:
			here.Want = "an integer in " + strconv.FormatInt(math.MinInt64>>(64-t.Bits()), 10) + ".." + strconv.FormatInt(math.MaxInt64>>(64-t.Bits()), 10)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		max := uint64(math.MaxUint64) >> (64 - t.Bits())
		switch n := x.(type) {
		case int64:
			if n >= 0 && uint64(n) <= max {
				return spi.Mismatch{}, false
			}
			here.Want = "an integer in 0.." + strconv.FormatUint(max, 10)
		case uint64:
			if n <= max {
				return spi.Mismatch{}, false
			}
			here.Want = "an integer in 0.." + strconv.FormatUint(max, 10)
		}
	case reflect.Float32, reflect.Float64:
		switch x.(type) {
		case int64, uint64, float64:
			return spi.Mismatch{}, false
		}
	case reflect.String:
		if _, ok := x.(string); ok {
			return spi.Mismatch{}, false
		}
	case reflect.Slice, reflect.Array:
		if _, ok := x.(string); ok && t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			return spi.Mismatch{}, false // base64: encoding/json's own error when it is not
		}
		if s, ok := x.([]any); ok {
			for i, e := range s {
				if t.Kind() == reflect.Array && i >= t.Len() {
					break // encoding/json drops the rest
				}
				if m, bad := walk(e, t.Elem(), path+"["+strconv.Itoa(i)+"]", depth+1); bad {
					return m, true
				}
			}
			return spi.Mismatch{}, false
		}
	case reflect.Map:
		if m, ok := x.(map[string]any); ok {
			for _, k := range slices.Sorted(maps.Keys(m)) {
				if mm, bad := walk(m[k], t.Elem(), path+"["+strconv.Quote(k)+"]", depth+1); bad {
					return mm, true
				}
			}
			return spi.Mismatch{}, false
		}
	case reflect.Struct:
		if m, ok := x.(map[string]any); ok {
			for _, k := range slices.Sorted(maps.Keys(m)) {
				name, ft, ok := jsonNames.Field(t, k)
				if !ok {
					continue // unknown keys are fieldError's
				}
				p := name
				if path != "" {
					p = path + "." + name
				}
				if mm, bad := walk(m[k], ft, p, depth+1); bad {
					return mm, true
				}
			}
			return spi.Mismatch{}, false
		}
	}
	return here, true
}
