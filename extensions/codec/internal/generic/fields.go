package generic

import (
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/airnode/airnode/internal/suggest"
)

// FieldError is a map key that names no field of the struct it was
// decoded into, even ignoring case. It says what was sent in a user's
// terms (spi.TypeMismatch): Error() is
// `unknown field "z" in Point (fields: X, Y); did you mean "Y"?`.
type FieldError struct {
	// Field is the key as sent.
	Field string
	// Struct is the struct type's name ("Point"), or its text when unnamed.
	Struct string
	// Path is where the struct is inside the decoded value, as Go would
	// write it (".Start", "[2]", `["k"]`); "" for the value itself.
	Path string
	// Fields are the struct's field names as its codec reads them, in
	// declaration order (embedded structs' inline).
	Fields []string
	// Suggest is the field nearest to Field (suggest.Closest, when not
	// every letter differs), or "".
	Suggest string
	// Both is the other key naming the same field when two keys differing
	// only in case were sent for it ("X" and "x"); "" otherwise.
	Both string
}

// Error returns the field, the struct, where, its fields and a suggestion.
func (e *FieldError) Error() string {
	var b strings.Builder
	if e.Both != "" {
		b.WriteString("fields " + strconv.Quote(e.Both) + " and " + strconv.Quote(e.Field) + " both name " + e.Suggest + " in " + e.Struct)
	} else {
		b.WriteString("unknown field " + strconv.Quote(e.Field) + " in " + e.Struct)
	}
	if e.Path != "" {
		b.WriteString(" at " + e.Path)
	}
	b.WriteString(" (fields: " + strings.Join(e.Fields, ", ") + ")")
	if e.Suggest != "" && e.Both == "" {
		b.WriteString("; did you mean " + strconv.Quote(e.Suggest) + "?")
	}
	return b.String()
}

// Got returns "a map with " and Error() (spi.TypeMismatch), so that a
// provider's BAD_REQUEST reads "argument 0: cannot decode into main.Point:
// got a map with unknown field ...".
func (e *FieldError) Got() string { return "a map with " + e.Error() }

// Names reads a struct field's name for a codec: the first of its tags
// present on the field decides (a name of "-" drops the field, an empty
// name keeps the Go name), as encoding/json does with "json" and msgpack
// with "msgpack", "json".
type Names []string

func (n Names) name(f reflect.StructField) (name string, tagged bool) {
	for _, tag := range n {
		if v, ok := f.Tag.Lookup(tag); ok {
			name, _, _ = strings.Cut(v, ",")
			if name == "" {
				return f.Name, false
			}
			return name, true
		}
	}
	return f.Name, false
}

// fieldsKey is fieldsCache's key: the struct type and the tags, the
// first two as they are (no join: a lookup allocates nothing for the
// codecs' Names), any others joined.
type fieldsKey struct {
	t                   reflect.Type
	first, second, rest string
}

// fieldsCache holds fields by struct type and tags.
var fieldsCache sync.Map // fieldsKey -> *structFields

type structFields struct {
	names []string                // in declaration order
	types map[string]reflect.Type // by name
}

// fields returns t's decodable fields: exported ones by name, the fields
// of embedded untagged structs inline (the shallower name winning), none
// named "-".
func (n Names) fields(t reflect.Type) *structFields {
	key := fieldsKey{t: t}
	switch {
	case len(n) > 2:
		key.rest = strings.Join(n[2:], ",")
		fallthrough
	case len(n) == 2:
		key.second = n[1]
		fallthrough
	case len(n) == 1:
		key.first = n[0]
	}
	if f, ok := fieldsCache.Load(key); ok {
		return f.(*structFields)
	}
	sf := &structFields{types: map[string]reflect.Type{}}
	n.collect(t, sf, map[reflect.Type]bool{})
	fieldsCache.Store(key, sf)
	return sf
}

func (n Names) collect(t reflect.Type, sf *structFields, seen map[reflect.Type]bool) {
	if seen[t] {
		return
	}
	seen[t] = true
	var embedded []reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		name, tagged := n.name(f)
		if name == "-" {
			continue
		}
		if f.Anonymous && !tagged {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				embedded = append(embedded, et)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if _, dup := sf.types[name]; !dup {
			sf.names = append(sf.names, name)
			sf.types[name] = f.Type
		}
	}
	for _, et := range embedded {
		n.collect(et, sf, seen)
	}
}

// Field returns the name and type of t's field that key names, as a codec
// decoding into t (a struct type) matches it: the field named key, else
// the first, in declaration order, whose name equals key ignoring case
// (encoding/json's rule); ok is false when no field matches.
func (n Names) Field(t reflect.Type, key string) (name string, ft reflect.Type, ok bool) {
	sf := n.fields(t)
	if ft, ok := sf.types[key]; ok {
		return key, ft, true
	}
	for _, name := range sf.names {
		if strings.EqualFold(key, name) {
			return name, sf.types[name], true
		}
	}
	return "", nil, false
}

// CheckFields walks x, a generic value about to be decoded into type t,
// and matches the keys of every map meeting a struct against the struct's
// fields (named by n): a key equal to a field's name stays, a key equal to
// one ignoring case (strings.EqualFold, encoding/json's rule) is renamed to
// it in place, and any other key is a *FieldError, as is a second key for
// one field — or, with drop, is deleted in place, as encoding/json ignores
// it. A "class" key whose value is a string, in a map meeting a struct
// with no field it matches, is deleted in place either way: it is the type
// hint Dubbo's PojoUtils writes in every object map of a generic call
// ({"class":"com.foo.Order","id":7}) and reads as a hint, not a field
// (ClassKey). Types opaque(t) says decode themselves are not looked into.
// It reports whether it changed x.
func (n Names) CheckFields(x any, t reflect.Type, opaque func(reflect.Type) bool, drop bool) (changed bool, err *FieldError) {
	c := checker{n: n, opaque: opaque, drop: drop}
	return c.check(x, t, "", 0)
}

// ClassKey is the key of Dubbo's type hint in a generic object map
// ("class": the Java class name), which CheckFields drops when its value
// is a string and the struct has no field the key matches.
const ClassKey = "class"

type checker struct {
	n      Names
	opaque func(reflect.Type) bool
	drop   bool
}

// maxCheckDepth bounds CheckFields' recursion; the codecs bound the
// nesting of generic values the same way (10000).
const maxCheckDepth = 10000

func (c checker) check(x any, t reflect.Type, path string, depth int) (bool, *FieldError) {
	if x == nil || depth > maxCheckDepth || t.Kind() == reflect.Interface || c.opaque(t) {
		return false, nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return c.check(x, t.Elem(), path, depth+1)
	case reflect.Slice, reflect.Array:
		a, ok := x.([]any)
		if !ok {
			return false, nil
		}
		renamed := false
		for i, e := range a {
			r, err := c.check(e, t.Elem(), path+"["+strconv.Itoa(i)+"]", depth+1)
			if err != nil {
				return false, err
			}
			renamed = renamed || r
		}
		return renamed, nil
	case reflect.Map:
		m, ok := x.(map[string]any)
		if !ok {
			return false, nil
		}
		renamed := false
		for k, e := range m {
			r, err := c.check(e, t.Elem(), path+"["+strconv.Quote(k)+"]", depth+1)
			if err != nil {
				return false, err
			}
			renamed = renamed || r
		}
		return renamed, nil
	case reflect.Struct:
		m, ok := x.(map[string]any)
		if !ok {
			return false, nil
		}
		return c.checkStruct(m, t, path, depth)
	}
	return false, nil
}

func (c checker) checkStruct(m map[string]any, t reflect.Type, path string, depth int) (bool, *FieldError) {
	sf := c.n.fields(t)
	fieldErr := func(k string) *FieldError {
		name := t.Name()
		if name == "" {
			name = t.String()
		}
		fe := &FieldError{Field: k, Struct: name, Path: path, Fields: sf.names, Suggest: suggest.Closest(k, sf.names)}
		if d := suggest.Distance(k, fe.Suggest); d >= max(len(k), len(fe.Suggest)) {
			fe.Suggest = "" // every letter changed: "Z" is no misspelt "X"
		}
		return fe
	}
	renames := map[string]string{} // field name -> the key sent for it
	var drops []string
	for _, k := range slices.Sorted(maps.Keys(m)) { // the first unknown key by name, whatever the map's order
		if _, ok := sf.types[k]; ok {
			continue
		}
		to := ""
		for _, name := range sf.names {
			if strings.EqualFold(k, name) {
				to = name
				break
			}
		}
		if _, hint := m[k].(string); hint && to == "" && k == ClassKey {
			drops = append(drops, k) // Dubbo's type hint, not a field
			continue
		}
		other, both := renames[to]
		if _, exact := m[to]; exact {
			other, both = to, true
		}
		if (to == "" || both) && c.drop {
			drops = append(drops, k)
			continue
		}
		if to == "" {
			return false, fieldErr(k)
		}
		if both {
			fe := fieldErr(k)
			fe.Both, fe.Suggest = other, to
			return false, fe
		}
		renames[to] = k
	}
	for _, k := range drops {
		delete(m, k)
	}
	for to, k := range renames {
		m[to] = m[k]
		delete(m, k)
	}
	renamed := len(renames) > 0 || len(drops) > 0
	for k, e := range m {
		r, err := c.check(e, sf.types[k], path+"."+k, depth+1)
		if err != nil {
			return false, err
		}
		renamed = renamed || r
	}
	return renamed, nil
}
