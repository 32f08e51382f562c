// Package cyclecheck finds, before msgpack encodes a value, whether the
// value reaches itself or nests deeper than MaxDepth: vmihailenco/msgpack
// encodes by recursion with no such check, and a cyclic value overflows
// the goroutine stack, a fatal error no recover catches. Shared by the
// msgpack codec (extensions/codec/msgpack) and the plugin hop
// (sdk/pluginrpc), which the kernel's plugin host imports and so may not
// import a concrete extension.
package cyclecheck

import (
	"encoding"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	vm "github.com/vmihailenco/msgpack/v5"
)

// msgpack encodes a value by recursion and has no cycle check: a value that
// reaches itself (n.Next = n, an ORM child pointing at its parent, a
// map[string]any holding itself) recursed until Go's stack limit, a fatal
// error that no recover catches, so one such result or argument killed the
// whole process with every service on it. Encode
// now walks such a value first and refuses it: "encountered a cycle via
// *main.Node", encoding/json's words (its ptrSeen approach: the pointers,
// maps and slices on the current path, recorded only beyond
// cycleCheckAfter steps so that a shallow value pays no map). The walk
// also refuses nesting deeper than MaxDepth maps and arrays, the bound
// every airnode decoder puts on a body (and encoding/json's decoder on
// JSON), so that a value no peer would read fails here, and a very deep
// acyclic one (a million-long linked list) cannot exhaust the stack either.
//
// Which types are walked is decided once per type (shapeOf): only a type
// that can reach itself through pointers, slices, arrays, maps and struct
// fields, or that holds an interface (any can hold anything, itself
// included). Strings, []byte, numbers, flat structs, []Flat, a
// map[string]string are never walked, and from a type that is, only the
// parts that may cycle are visited (a node's Next, not its []Item).
// A type that encodes itself (EncodeMsgpack, MarshalMsgpack, MarshalBinary,
// MarshalText, time.Time, error) is a leaf: what it writes is its own, and
// a cyclic value inside it is not seen.

// MaxDepth is the nesting of maps and arrays beyond which a value is
// refused: 10,000, the bound airnode's msgpack decoder (and encoding/json's
// decoder) put on what they read, so nothing a peer would read is refused.
const MaxDepth = 10000

// cycleCheckAfter is the number of steps (pointers, interfaces, containers)
// on one path after which the walk records the pointers on the path:
// encoding/json's startDetectingCyclesAfter.
const cycleCheckAfter = 1000

// maxSteps bounds the steps on one path, so that a chain of pointers or
// interfaces without maps or arrays between them (type P *P) cannot
// exhaust the stack either; a path of MaxDepth nested structs takes at
// most three steps a level (a struct, an interface field, a pointer).
const maxSteps = 8 * MaxDepth

// errCycle is the walk's verdict for a value that reaches itself.
type errCycle struct{ t reflect.Type }

func (e *errCycle) Error() string { return "encountered a cycle via " + e.t.String() }

var (
	errTooDeepEncode = errors.New("nesting deeper than " + strconv.Itoa(MaxDepth) +
		" maps and arrays (the decoders' bound: no peer would read it)")
	errTooLong = errors.New("more than " + strconv.Itoa(maxSteps) +
		" pointers, interfaces and containers on one path")
)

// Check returns an error for a value that msgpack would encode
// without end, a value that reaches itself ("encountered a cycle via
// *main.Node"), or one nested deeper than MaxDepth maps and arrays. Struct
// fields are the ones msgpack encodes: fallbackTag names the struct tag
// read when a field has no msgpack tag, "json" for airnode's msgpack
// codec, "" for msgpack.Marshal. A nil error
// for the common values (strings, []byte, numbers, structs that cannot
// reach themselves) costs a type switch or a type comparison and a map
// lookup, and no allocation. Safe for concurrent use.
func Check(v any, fallbackTag string) error {
	var w Walker
	return w.check(v, fallbackTag)
}

// Walker is one check's state; an encoder keeps one, remembering the shape
// of the last type it checked (a pooled encoder meets the same types body
// after body).
type Walker struct {
	seen  map[seenKey]struct{} // the pointers, maps and slices on the path, beyond cycleCheckAfter steps
	tag   string               // the fallback struct tag of lastS
	lastT reflect.Type         // the type checked last
	lastS *shape               // lastT's shape
}

// seenKey identifies a pointer, map or slice on the path: its address, its
// shape (a struct and its first field share an address; a shape stands
// for its type: a type met through an interface has one shape per walk,
// so a cycle through it is seen at the latest on its second turn) and,
// for a slice, its length (encoding/json's key). Pointers and an int hash
// as plain memory, where a reflect.Type, an interface, did not.
type seenKey struct {
	p unsafe.Pointer
	s *shape
	n int
}

// genericMap and genericSlice stand for map[string]any and []any in the
// keys of the generic walk.
var (
	genericMap   = &shape{t: reflect.TypeFor[map[string]any](), kind: reflect.Map, walk: true}
	genericSlice = &shape{t: reflect.TypeFor[[]any](), kind: reflect.Slice, walk: true}
)

func (w *Walker) check(v any, tag string) error {
	if Flat(v) {
		return nil
	}
	return w.Walk(v, tag)
}

// Flat reports whether v is one of the exchange's common values that hold
// no pointer, interface or composite of them (a string, []byte, a number,
// a map[string]string), or a pointer to one: one type switch, where
// reflect's methods cost tens of nanoseconds per value encoded.
func Flat(v any) bool {
	switch v.(type) {
	case nil, string, bool, int, int64, uint64, float64, []byte, map[string]string, []string,
		*string, *bool, *float64, *[]byte, *map[string]string:
		return true
	}
	return false
}

// Walk is Check for a v that is not Flat, reusing w's memory of the last
// type it met (an encoder keeps one Walker: a pooled encoder meets the
// same types body after body). Not safe for concurrent use.
func (w *Walker) Walk(v any, tag string) error {
	if tag != w.tag {
		w.tag, w.lastT, w.lastS = tag, nil, nil
	}
	var err error
	switch x := v.(type) {
	case map[string]any, []any: // the generic values: a type switch a value, no reflect
		err = w.generic(x, 0, 0)
	default:
		t := reflect.TypeOf(v)
		if t != w.lastT {
			w.lastT, w.lastS = t, shapeOf(t, tag)
		}
		if !w.lastS.walk {
			return nil
		}
		err = w.value(reflect.ValueOf(v), w.lastS, 0, 0)
	}
	w.seen = nil // only a walk beyond cycleCheckAfter allocates it: a pooled encoder keeps no large map
	return err
}

// generic walks x, a value held by an interface, nest maps and arrays and
// steps steps deep; it walks map[string]any and []any by type switch.
func (w *Walker) generic(x any, nest, steps int) error {
	var k seenKey
	switch x := x.(type) {
	case nil, string, bool, int64, uint64, float64, int, []byte:
		return nil
	case map[string]any:
		if len(x) == 0 {
			return nil
		}
		if steps >= cycleCheckAfter {
			k = seenKey{p: reflect.ValueOf(x).UnsafePointer(), s: genericMap}
		}
		if err := w.enter(k, &nest, &steps); err != nil {
			return err
		}
		for _, e := range x {
			if err := w.generic(e, nest, steps); err != nil {
				return err
			}
		}
		w.leave(k)
		return nil
	case []any:
		if len(x) == 0 {
			return nil
		}
		if steps >= cycleCheckAfter {
			k = seenKey{p: unsafe.Pointer(unsafe.SliceData(x)), s: genericSlice, n: len(x)}
		}
		if err := w.enter(k, &nest, &steps); err != nil {
			return err
		}
		for _, e := range x {
			if err := w.generic(e, nest, steps); err != nil {
				return err
			}
		}
		w.leave(k)
		return nil
	}
	s := shapeOf(reflect.TypeOf(x), w.tag)
	if !s.walk {
		return nil
	}
	return w.value(reflect.ValueOf(x), s, nest, steps)
}

// enter counts a non-empty map or array on the path (nest, steps) and,
// beyond cycleCheckAfter steps, records k, its identity, on the path; it
// reports the cycle when k is there already, or a path too deep. A
// recorded k is dropped by leave when the walk is done with it (on an
// error the walk ends and check drops them all).
func (w *Walker) enter(k seenKey, nest, steps *int) error {
	if *nest++; *nest > MaxDepth {
		return errTooDeepEncode
	}
	return w.step(k, steps)
}

// step counts a step on the path and records k as enter does.
func (w *Walker) step(k seenKey, steps *int) error {
	if *steps++; *steps > maxSteps {
		return errTooLong
	}
	if k.p == nil {
		return nil
	}
	if w.seen == nil {
		w.seen = map[seenKey]struct{}{}
	}
	if _, ok := w.seen[k]; ok {
		return &errCycle{t: k.s.t}
	}
	w.seen[k] = struct{}{}
	return nil
}

// leave drops k from the path.
func (w *Walker) leave(k seenKey) {
	if k.p != nil {
		delete(w.seen, k)
	}
}

// value walks v, of shape s (s.walk), nest maps and arrays and steps steps
// below the top.
func (w *Walker) value(v reflect.Value, s *shape, nest, steps int) error {
	var k seenKey
	switch s.kind {
	case reflect.Interface:
		if v.IsNil() {
			return nil
		}
		if steps++; steps > maxSteps {
			return errTooLong
		}
		e := v.Elem()
		switch e.Kind() {
		case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Array, reflect.Struct, reflect.Interface:
		default:
			return nil // a scalar: nothing to walk
		}
		if e.Type() == genericMap.t && e.CanInterface() { // the generic walk, without reflect
			return w.generic(e.Interface(), nest, steps)
		}
		es := shapeOf(e.Type(), w.tag)
		if !es.walk {
			return nil
		}
		return w.value(e, es, nest, steps)
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		if steps >= cycleCheckAfter {
			k = seenKey{p: v.UnsafePointer(), s: s}
		}
		if err := w.step(k, &steps); err != nil {
			return err
		}
		if err := w.value(v.Elem(), s.elem, nest, steps); err != nil {
			return err
		}
	case reflect.Map, reflect.Slice:
		if v.Len() == 0 { // nil too
			return nil
		}
		if steps >= cycleCheckAfter {
			k = seenKey{p: v.UnsafePointer(), s: s}
			if s.kind == reflect.Slice {
				k.n = v.Len()
			}
		}
		if err := w.enter(k, &nest, &steps); err != nil {
			return err
		}
		if err := w.elements(v, s, nest, steps); err != nil {
			return err
		}
	case reflect.Array:
		if v.Len() == 0 {
			return nil
		}
		if err := w.enter(k, &nest, &steps); err != nil {
			return err
		}
		return w.elements(v, s, nest, steps)
	case reflect.Struct:
		if err := w.enter(k, &nest, &steps); err != nil {
			return err
		}
		for _, f := range s.fields {
			n := nest
			if f.inline { // msgpack writes an embedded struct's fields in its parent's map
				n--
			}
			if err := w.value(v.Field(f.index), f.shape, n, steps); err != nil {
				return err
			}
		}
	}
	w.leave(k)
	return nil
}

// elements walks the elements (and map keys) of v, a map, slice or array
// of shape s.
func (w *Walker) elements(v reflect.Value, s *shape, nest, steps int) error {
	if s.kind != reflect.Map {
		for i := range v.Len() {
			if err := w.value(v.Index(i), s.elem, nest, steps); err != nil {
				return err
			}
		}
		return nil
	}
	for it := v.MapRange(); it.Next(); {
		if s.key.walk {
			if err := w.value(it.Key(), s.key, nest, steps); err != nil {
				return err
			}
		}
		if s.elem.walk {
			if err := w.value(it.Value(), s.elem, nest, steps); err != nil {
				return err
			}
		}
	}
	return nil
}

// shape is what the walk needs to know of a type, decided once per type.
type shape struct {
	t      reflect.Type
	kind   reflect.Kind // Pointer, Slice, Array, Map, Struct, Interface; Invalid for a leaf
	walk   bool         // a value may reach itself or holds an interface: walk it (false: a leaf)
	nests  bool         // msgpack writes it as a map or an array: one level of nesting
	elem   *shape       // Pointer, Slice, Array: the element; Map: the value
	key    *shape       // Map: the key
	fields []field      // Struct: the encoded fields that are walked
}

// field is a struct field that the walk visits.
type field struct {
	index  int
	shape  *shape
	inline bool // an embedded struct (or pointer to one): no level of its own
}

// shapes caches shapeOf for this codec's fallback tag "json", plainShapes
// for msgpack.Marshal's "" (reflect.Type → *shape), otherShapes for any
// other (shapeKey → *shape).
var shapes, plainShapes, otherShapes sync.Map

type shapeKey struct {
	t   reflect.Type
	tag string
}

// shapeOf returns t's shape when struct fields without a msgpack tag are
// named by tag. Shapes of the types inside t are built with it (a type
// graph may be cyclic: the shapes point at one another).
func shapeOf(t reflect.Type, tag string) *shape {
	cache, key := &shapes, any(t)
	switch tag {
	case "json":
	case "":
		cache = &plainShapes
	default:
		cache, key = &otherShapes, shapeKey{t, tag}
	}
	if s, ok := cache.Load(key); ok {
		return s.(*shape)
	}
	b := shapeBuilder{tag: tag, built: map[reflect.Type]*shape{}}
	s := b.build(t)
	b.mark()
	actual, _ := cache.LoadOrStore(key, s)
	return actual.(*shape)
}

type shapeBuilder struct {
	tag   string
	built map[reflect.Type]*shape
	order []*shape
}

var (
	typeOfCustomEncoder   = reflect.TypeFor[vm.CustomEncoder]()
	typeOfMarshaler       = reflect.TypeFor[vm.Marshaler]()
	typeOfBinaryMarshaler = reflect.TypeFor[encoding.BinaryMarshaler]()
	typeOfTextMarshaler   = reflect.TypeFor[encoding.TextMarshaler]()
	typeOfError           = reflect.TypeFor[error]()
)

// encodesItself reports whether msgpack encodes t by a method of t or *t
// (its getEncoder's order), or as an error's text.
func encodesItself(t reflect.Type) bool {
	for _, it := range []reflect.Type{typeOfCustomEncoder, typeOfMarshaler, typeOfBinaryMarshaler, typeOfTextMarshaler} {
		if t.Implements(it) || t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(it) {
			return true
		}
	}
	return t == typeOfError
}

func (b *shapeBuilder) build(t reflect.Type) *shape {
	if s, ok := b.built[t]; ok {
		return s
	}
	s := &shape{t: t}
	b.built[t] = s
	b.order = append(b.order, s)
	if encodesItself(t) {
		return s
	}
	switch k := t.Kind(); k {
	case reflect.Pointer:
		s.kind, s.elem = k, b.build(t.Elem())
	case reflect.Interface:
		s.kind = k
	case reflect.Slice, reflect.Array:
		if e := t.Elem(); e.Kind() != reflect.Uint8 && e != typeOfString { // bytes are binary; []string msgpack's own loop
			s.kind, s.nests, s.elem = k, true, b.build(e)
		}
	case reflect.Map:
		s.kind, s.nests, s.key, s.elem = k, true, b.build(t.Key()), b.build(t.Elem())
	case reflect.Struct:
		s.kind, s.nests = k, true
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("msgpack")
			if tag == "" && b.tag != "" {
				tag = f.Tag.Get(b.tag)
			}
			name, opts, _ := strings.Cut(tag, ",")
			if name == "-" || !f.IsExported() && !f.Anonymous {
				continue // msgpack's getFields skips it
			}
			s.fields = append(s.fields, field{index: i, shape: b.build(f.Type),
				inline: f.Anonymous && !strings.Contains(opts, "noinline") && structOrPointerTo(f.Type)})
		}
	}
	return s
}

var typeOfString = reflect.TypeFor[string]()

func structOrPointerTo(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct
}

// children lists the shapes a value of s holds directly.
func (s *shape) children() []*shape {
	var c []*shape
	if s.elem != nil {
		c = append(c, s.elem)
	}
	if s.key != nil {
		c = append(c, s.key)
	}
	for _, f := range s.fields {
		c = append(c, f.shape)
	}
	return c
}

// mark sets walk on every shape built that holds an interface or can reach
// itself, and on every shape that reaches one of those; then drops from
// each struct the fields that are not walked. The shapes that can reach
// themselves are the strongly connected components of the type graph
// (Tarjan's algorithm: linear in the types and their edges).
func (b *shapeBuilder) mark() {
	t := tarjan{index: map[*shape]int{}, low: map[*shape]int{}, on: map[*shape]bool{}}
	for _, s := range b.order {
		if _, ok := t.index[s]; !ok {
			t.visit(s)
		}
	}
	for _, s := range b.order {
		kept := s.fields[:0]
		for _, f := range s.fields {
			if f.shape.walk {
				kept = append(kept, f)
			}
		}
		s.fields = kept
	}
}

// tarjan is the state of Tarjan's strongly connected components search.
type tarjan struct {
	index, low map[*shape]int
	on         map[*shape]bool // on stack
	stack      []*shape
	next       int
}

// visit searches from s and, when s roots a component, sets walk on its
// shapes: the component is a cycle (two shapes or more, or one holding
// itself), holds an interface, or reaches a component that walks (those
// are done before: a component is completed after all it reaches).
func (t *tarjan) visit(s *shape) {
	t.index[s], t.low[s] = t.next, t.next
	t.next++
	t.stack = append(t.stack, s)
	t.on[s] = true
	for _, c := range s.children() {
		if _, ok := t.index[c]; !ok {
			t.visit(c)
			t.low[s] = min(t.low[s], t.low[c])
		} else if t.on[c] {
			t.low[s] = min(t.low[s], t.index[c])
		}
	}
	if t.low[s] != t.index[s] {
		return
	}
	i := len(t.stack) - 1
	for t.stack[i] != s {
		i--
	}
	comp := t.stack[i:]
	t.stack = t.stack[:i]
	walk := len(comp) > 1
	for _, n := range comp {
		t.on[n] = false
		if n.kind == reflect.Interface {
			walk = true
		}
		for _, c := range n.children() {
			if c == n || c.walk {
				walk = true
			}
		}
	}
	for _, n := range comp {
		n.walk = walk
	}
}
