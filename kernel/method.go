package kernel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/airnode/airnode/internal/fieldlog"
	"github.com/airnode/airnode/internal/gotype"
	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

var (
	typeOfContext = reflect.TypeFor[context.Context]()
	typeOfError   = reflect.TypeFor[error]()
	typeOfAny     = reflect.TypeFor[any]()
)

// method is one exported method of a service implementation, reflected once
// at export (like net/rpc's methodType, with a context and several
// arguments).
type method struct {
	name   string
	fn     reflect.Value  // bound to the receiver
	ctx    bool           // first parameter is context.Context
	args   []reflect.Type // parameter types after the context
	result bool           // returns (R, error); false: returns error only
	// small: every answer is known small before the method runs
	// (smallResult: an error only, or R of a fixed size), which the
	// exchange spares its slow start and the Server's unsent.limit
	// (server.smallAnswer, exchange.Options.SmallAnswer)
	small bool
	// direct calls the method without reflect.Value.Call (shapes under
	// "Direct calls" below); nil for the other shapes.
	direct directCall
	decode []argDecoder // by argument, as args
	// codecID is the id of the codec the provider's URL chose for the
	// method (skipUncodable); others holds, by codec id, why a call in
	// another codec cannot be served ("" when it can), once asked
	// (otherCodec).
	codecID uint8
	others  *[protocol.CodecMask + 1]atomic.Pointer[string]
}

// methodTable is the cached method set of one exported Go value.
type methodTable struct {
	typ     string             // "*demo.Echo", for messages
	methods map[string]*method // by name
	names   []string           // sorted
	// skipped are the exported methods of another shape, by name: why
	// each is not served ("NoCtx(int) int: want ..."), for Export's
	// warnings and lookup's SERVICE_NOT_FOUND.
	skipped map[string]string
	// quietly are the skipped methods Export does not warn about: a
	// String() string (fmt.Stringer) and methods returning the exported
	// type itself (setup methods like demo.Echo's LimitPayload, called
	// before Export).
	quietly map[string]bool
	// ptrOnly are, sorted, the methods of a servable shape that only the
	// pointer type has, when a value (not a pointer) was exported: not
	// served, Export warns naming them (pointerHint).
	ptrOnly     []string
	pointerForm string // "&edge.Svc{} (a *edge.Svc)", or "a *edge.Level" for a type not a struct
}

// pointerHint says which methods an exported value lacks because they
// have pointer receivers, and what to export instead (net/rpc's "pass a
// pointer to value of that type" hint): "methods PtrErr, PtrRecv have
// pointer receivers: export &edge.Svc{} (a *edge.Svc) to serve them",
// "method PtrRecv has a pointer receiver: export &edge.Svc{} (a
// *edge.Svc) to serve it"; "" when none.
func (mt *methodTable) pointerHint() string {
	if len(mt.ptrOnly) == 0 {
		return ""
	}
	what, them := "methods", "them"
	if len(mt.ptrOnly) == 1 {
		what, them = "method", "it"
	}
	verb := "have pointer receivers"
	if len(mt.ptrOnly) == 1 {
		verb = "has a pointer receiver"
	}
	return fmt.Sprintf("%s %s %s: export %s to serve %s", what, strings.Join(mt.ptrOnly, ", "), verb, mt.pointerForm, them)
}

// servableShape is what a served method must look like, for messages.
const servableShape = "want M(ctx context.Context, args...) (R, error) or error, the context optional"

// skippedNames returns the skipped methods' names, sorted.
func (mt *methodTable) skippedNames() []string {
	return slices.Sorted(maps.Keys(mt.skipped))
}

// newMethodTable reflects impl's exported methods of the shapes
//
//	func (s *T) M(ctx context.Context, args...) (R, error)
//	func (s *T) M(ctx context.Context, args...) error
//	func (s *T) M(args...) (R, error)
//	func (s *T) M(args...) error
//
// Other exported methods, and variadic ones, are skipped: the table says
// why (skipped), Export warns about each and a call of one is answered
// SERVICE_NOT_FOUND saying so. So are methods of these shapes that no
// call could reach or answer (unservable): a context.Context after the
// first parameter, a chan, func or unsafe.Pointer parameter or result.
// When impl is a value (not a pointer), the
// methods of these shapes declared on the pointer type are not in its
// method set: the table names them (ptrOnly, pointerHint). It fails when
// impl is nil, a typed nil pointer, or has no method of these shapes.
// Methods of the common shapes listed under "Direct calls" below are
// called directly, the others by reflection.
func newMethodTable(impl any) (*methodTable, error) {
	if impl == nil {
		return nil, errors.New("kernel: export: nil service implementation")
	}
	v := reflect.ValueOf(impl)
	t := v.Type()
	if t.Kind() == reflect.Pointer && v.IsNil() {
		want := "new(" + t.Elem().String() + ")"
		if t.Elem().Kind() == reflect.Struct && t.Elem().Name() != "" {
			want = "&" + t.Elem().String() + "{}"
		}
		return nil, fmt.Errorf("kernel: export: nil %s: a typed nil pointer has no value to serve; export a pointer to a value, such as %s", t, want)
	}
	recv, recvType := receiver(v)
	mt := &methodTable{typ: t.String(), methods: map[string]*method{}, skipped: map[string]string{}, quietly: map[string]bool{}}
	for i := range t.NumMethod() {
		m := t.Method(i)
		if !m.IsExported() {
			continue
		}
		ft := m.Type // includes the receiver as In(0)
		sig := m.Name + strings.TrimPrefix(gotype.String(v.Method(i).Type()), "func")
		if ft.IsVariadic() {
			mt.skipped[m.Name] = sig + ": variadic; " + servableShape
			continue
		}
		var out bool
		switch {
		case ft.NumOut() == 1 && ft.Out(0) == typeOfError:
		case ft.NumOut() == 2 && ft.Out(1) == typeOfError:
			out = true
		default:
			mt.skipped[m.Name] = sig + ": " + servableShape
			if m.Name == "String" && ft.NumIn() == 1 && ft.NumOut() == 1 && ft.Out(0).Kind() == reflect.String ||
				ft.NumOut() == 1 && (ft.Out(0) == t || ft.Out(0) == recvType) {
				mt.quietly[m.Name] = true
			}
			continue
		}
		me := &method{name: m.Name, fn: v.Method(i), result: out, small: !out || smallResult(ft.Out(0))}
		first := 1
		if ft.NumIn() > 1 && ft.In(1) == typeOfContext {
			me.ctx = true
			first = 2
		}
		if why := unservable(ft, first); why != "" {
			mt.skipped[m.Name] = sig + ": " + why
			continue
		}
		for j := first; j < ft.NumIn(); j++ {
			me.args = append(me.args, ft.In(j))
			me.decode = append(me.decode, newArgDecoder(ft.In(j)))
		}
		if pm, ok := recvType.MethodByName(m.Name); ok {
			me.direct = newDirectCall(pm.Func, recv)
		}
		mt.methods[m.Name] = me
		mt.names = append(mt.names, m.Name)
	}
	if t.Kind() != reflect.Pointer {
		mt.pointerOnly(t)
	}
	if len(mt.names) == 0 {
		return nil, mt.noMethodError()
	}
	sort.Strings(mt.names)
	return mt, nil
}

// noMethodError is Export's error for a value with no method to serve,
// naming the skipped ones and why.
func (mt *methodTable) noMethodError() error {
	msg := fmt.Sprintf("kernel: export %s: no exported method of shape func(ctx context.Context, args...) (R, error) or error", mt.typ)
	if len(mt.skipped) > 0 {
		var why []string
		for _, name := range mt.skippedNames() {
			why = append(why, mt.skipped[name])
		}
		msg += "; not served: " + strings.Join(why, "; ")
	}
	if hint := mt.pointerHint(); hint != "" {
		msg += " (hint: " + hint + ")"
	}
	return errors.New(msg)
}

// unservable says why a method of type ft (the receiver as In(0)), whose
// results have a servable shape and whose arguments start at In(first),
// can never be called successfully; "" when it can. A context.Context
// after the first parameter would be read from the wire as an argument
// (the method gets a nil or undecodable context); a chan, func or
// unsafe.Pointer parameter or result cannot be sent by any codec, so a
// method returning one would run and then fail SERIALIZATION_ERROR every
// time. (A parameter of an interface type with methods, fmt.Stringer,
// takes nil, and the codecs answer anything else BAD_REQUEST naming the
// interface: it is served.)
func unservable(ft reflect.Type, first int) string {
	for j := first; j < ft.NumIn(); j++ {
		p, arg := ft.In(j), j-first
		switch {
		case p == typeOfContext:
			return fmt.Sprintf("context.Context is parameter %d; it must come first (elsewhere it would be read from the wire as argument %d)", j, arg)
		case unsendable(p):
			return fmt.Sprintf("argument %d is a %s, which no codec can send", arg, p)
		}
	}
	if ft.NumOut() == 2 && unsendable(ft.Out(0)) {
		return fmt.Sprintf("the result is a %s, which no codec can send", ft.Out(0))
	}
	return ""
}

// smallResult reports whether every value of result type t encodes in
// exchange.SmallAnswerMax bytes or fewer, in any bundled codec: t is of a
// fixed size (bool, an integer, float or complex type, or an array or
// struct made only of those) and encodedBound says so. A type with its
// own encoding anywhere in it (customEncoding: a MarshalJSON may write
// anything) is not, nor is any type holding a pointer, string, slice, map
// or interface: their size is the value's.
func smallResult(t reflect.Type) bool {
	n, ok := encodedBound(t)
	return ok && n <= exchange.SmallAnswerMax
}

// encodedBound returns an upper bound of the bytes a value of type t
// encodes to (JSON's text being the longest: a float64 in 24 characters,
// a struct's field names and tags in full), and false when t is not of a
// fixed size (smallResult). It stops adding once over
// exchange.SmallAnswerMax, so a huge array costs nothing to reject.
func encodedBound(t reflect.Type) (int, bool) {
	const scalar = 32 // "-9223372036854775808", "-1.7976931348623157e+308", with room
	if customEncoding(t, marshalers) {
		return 0, false
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return scalar, true
	case reflect.Complex64, reflect.Complex128:
		return 2 * scalar, true
	case reflect.Array:
		e, ok := encodedBound(t.Elem())
		if !ok {
			return 0, false
		}
		if t.Len() > exchange.SmallAnswerMax {
			return exchange.SmallAnswerMax + 1, true
		}
		return 2 + t.Len()*(e+1), true
	case reflect.Struct:
		n := 2
		for i := range t.NumField() {
			f := t.Field(i)
			e, ok := encodedBound(f.Type)
			if !ok {
				return 0, false
			}
			n += len(f.Name) + len(f.Tag) + 4 + e // "name":value,
			n = min(n, exchange.SmallAnswerMax+1)
		}
		return n, true
	}
	return 0, false
}

// unsendable reports whether no codec can carry a value of type t.
func unsendable(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return true
	}
	return false
}

// skipUncodable moves to skipped the methods whose argument or result
// types the codec u chooses for them (the "codec" key, method-level
// first) cannot carry (codable: the codec's own encoding and decoding of
// an empty value): a plain Go struct, a named int or time.Time under
// codec=protobuf, which takes proto.Message values and unnamed scalars,
// say. A consumer through a registry takes the provider's codec, so every
// call of such a method would fail, one with a result only after the
// method ran. Export warns about each and a call of one is
// SERVICE_NOT_FOUND saying why, as for the other shapes; a consumer that
// chose another codec itself does not bring it back (export the service
// under another key with that codec), and its call is BAD_REQUEST before
// the method runs (method.otherCodec). An unknown codec name is left to
// Export's own checks. It returns Export's error for a value with no
// method left.
func (mt *methodTable) skipUncodable(codecs *extension.Point[spi.Codec], u spi.URL) error {
	for _, name := range slices.Clone(mt.names) {
		m := mt.methods[name]
		c, _, err := codecs.Select(u, name)
		if err != nil {
			continue
		}
		m.codecID, m.others = c.ID(), new([protocol.CodecMask + 1]atomic.Pointer[string])
		why := m.uncodable(c)
		if why == "" {
			continue
		}
		mt.skipped[name] = name + strings.TrimPrefix(gotype.String(m.fn.Type()), "func") + ": " + why
		delete(mt.methods, name)
		mt.names = slices.DeleteFunc(mt.names, func(n string) bool { return n == name })
	}
	if len(mt.names) == 0 {
		return mt.noMethodError()
	}
	return nil
}

// uncodable says which argument or result type of m the codec c cannot
// carry ("codec protobuf cannot encode the result (main.Level): ..."), or
// "" when c carries them all.
func (m *method) uncodable(c spi.Codec) string {
	for i, t := range m.args {
		if verb, err := codable(c, t); err != nil {
			return fmt.Sprintf("codec %s cannot %s argument %d (%s): %v", c.Name(), verb, i, gotype.String(t), err)
		}
	}
	if ft := m.fn.Type(); m.result {
		if verb, err := codable(c, ft.Out(0)); err != nil {
			return fmt.Sprintf("codec %s cannot %s the result (%s): %v", c.Name(), verb, gotype.String(ft.Out(0)), err)
		}
	}
	return ""
}

// otherCodec returns the BAD_REQUEST for a call of m in codec c, another
// codec than the one the provider's URL chose for m (a consumer's own
// codec key): when c cannot carry m's argument or result types the method
// does not run, where otherwise it would run and its answer fail
// SERIALIZATION_ERROR. nil when c carries them; the verdict is kept per
// codec id, so a call in a codec met before costs one atomic load.
func (m *method) otherCodec(service string, c spi.Codec) error {
	slot := &m.others[c.ID()&protocol.CodecMask]
	why := slot.Load()
	if why == nil {
		s := m.uncodable(c)
		why = &s
		slot.Store(why)
	}
	if *why == "" {
		return nil
	}
	// No "export it with codec=X" hint: X cannot carry this method's types
	// (tester65 #3).
	return spi.Errorf(spi.StatusBadRequest, "%s.%s: %s; not run: leave the codec key out of the reference URL (airnode call: no -p codec=...) to call in the provider's own codec (its URL's codec key, which a consumer that finds it through a registry takes from there)",
		service, m.name, *why)
}

// codable encodes an empty value of type t with c (a nil-free one for a
// pointer, map or slice, whose nil many codecs accept for any type), then
// decodes what it wrote into a new t, and returns the codec's error and
// what failed ("encode", "decode"): the codec itself is the one source of
// what it carries. nil for an interface type, which is not probed, and
// when the codec panics (it cannot tell). A type with its own encoding (a
// MarshalJSON, MarshalText, ... method: customEncoding) may refuse its
// own empty value where real ones are fine: its failed encoding counts
// unless the failure is one of the type's own marshalers' (ownRefuses),
// and a failed decoding counts only for a type with no own form inside
// (ownForm).
func codable(c spi.Codec, t reflect.Type) (verb string, err error) {
	if t.Kind() == reflect.Interface {
		return "", nil
	}
	var v any
	switch t.Kind() {
	case reflect.Pointer:
		v = reflect.New(t.Elem()).Interface()
	case reflect.Map:
		v = reflect.MakeMap(t).Interface()
	case reflect.Slice:
		v = reflect.MakeSlice(t, 0, 0).Interface()
	default:
		v = reflect.Zero(t).Interface()
	}
	defer func() {
		if recover() != nil {
			verb, err = "", nil // the encoder or decoder is not released: its state is unknown
		}
	}()
	var buf bytes.Buffer
	enc := c.NewEncoder(&buf)
	err = enc.Encode(v)
	spi.Release(enc)
	if err != nil {
		if customEncoding(t, marshalers) && ownRefuses(v, err) {
			return "", nil
		}
		return "encode", exportError(err)
	}
	dec := c.NewDecoder(bytes.NewReader(buf.Bytes()))
	err = dec.Decode(reflect.New(t).Interface())
	spi.Release(dec)
	if err != nil {
		if ownForm(t, map[reflect.Type]bool{}) {
			return "", nil
		}
		return "decode", exportError(err)
	}
	return "", nil
}

// ownForm reports whether t, or a type inside it (a field, element, key
// or pointee), has its own encoding or decoding (customEncoding): one
// that writes a form its reading does not take (a MarshalJSON without an
// UnmarshalJSON) fails a typed caller's round trip, where a generic
// caller's plain form is read; so a failed decoding of the empty value
// does not tell for it.
func ownForm(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	if customEncoding(t, marshalers) || customEncoding(t, unmarshalers) {
		return true
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return ownForm(t.Elem(), seen)
	case reflect.Map:
		return ownForm(t.Key(), seen) || ownForm(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if ownForm(t.Field(i).Type, seen) {
				return true
			}
		}
	}
	return false
}

// exportError is a codec's error in Export's words: the message without
// the call's status.
func exportError(err error) error {
	if se, ok := err.(*spi.Error); ok && se.Message != "" {
		return errors.New(se.Message) // the status is the call's; this is Export's
	}
	return err
}

// The methods through which a codec may encode or decode a type its own
// way: encoding/json's, encoding's and msgpack's marshaler interfaces, by
// name.
var (
	marshalers   = []string{"MarshalJSON", "MarshalText", "MarshalBinary", "MarshalMsgpack", "EncodeMsgpack"}
	unmarshalers = []string{"UnmarshalJSON", "UnmarshalText", "UnmarshalBinary", "UnmarshalMsgpack", "DecodeMsgpack"}
)

// customEncoding reports whether t, or *t, has one of the methods names.
func customEncoding(t reflect.Type, names []string) bool {
	for _, tt := range []reflect.Type{t, reflect.PointerTo(t)} {
		for _, name := range names {
			if _, ok := tt.MethodByName(name); ok {
				return true
			}
		}
	}
	return false
}

// ownRefuses reports whether codecErr, a codec's failure to encode v,
// may be v's own: one of v's marshalers (marshalers, on v or a pointer to
// a copy) fails on v with an error codecErr wraps or quotes, or panics, or
// cannot be called without a codec's encoder (EncodeMsgpack) or has
// another shape. A codec that never calls them (protobuf) fails with its
// own words: that failure counts.
func ownRefuses(v any, codecErr error) (refuses bool) {
	defer func() {
		if recover() != nil {
			refuses = true
		}
	}()
	rv := reflect.ValueOf(v)
	p := reflect.New(rv.Type())
	p.Elem().Set(rv)
	for _, name := range marshalers {
		f := rv.MethodByName(name)
		if !f.IsValid() {
			f = p.MethodByName(name)
		}
		if !f.IsValid() {
			continue
		}
		if ft := f.Type(); ft.NumIn() != 0 || ft.NumOut() != 2 || ft.Out(1) != typeOfError {
			return true
		}
		if out := f.Call(nil); !out[1].IsNil() {
			own := out[1].Interface().(error)
			if errors.Is(codecErr, own) || strings.Contains(codecErr.Error(), own.Error()) {
				return true
			}
		}
	}
	return false
}

// pointerOnly fills ptrOnly with the exported methods of a servable shape
// that *t has and the value type t lacks (pointer receivers).
func (mt *methodTable) pointerOnly(t reflect.Type) {
	pt := reflect.PointerTo(t)
	for i := range pt.NumMethod() {
		m := pt.Method(i)
		if !m.IsExported() || m.Type.IsVariadic() {
			continue
		}
		if _, ok := t.MethodByName(m.Name); ok {
			continue
		}
		ft := m.Type
		if ft.NumOut() == 1 && ft.Out(0) == typeOfError || ft.NumOut() == 2 && ft.Out(1) == typeOfError {
			mt.ptrOnly = append(mt.ptrOnly, m.Name)
		}
	}
	slices.Sort(mt.ptrOnly)
	mt.pointerForm = "a " + pt.String()
	if t.Kind() == reflect.Struct && t.Name() != "" {
		mt.pointerForm = "&" + t.String() + "{} (" + mt.pointerForm + ")"
	}
}

// lookup returns the method named name, or a SERVICE_NOT_FOUND error naming
// it and the service (and, when name is not a method at all, the methods
// and the one meant: noMethodError).
func (mt *methodTable) lookup(service, name string) (*method, error) {
	if m, ok := mt.methods[name]; ok {
		return m, nil
	}
	if slices.Contains(mt.ptrOnly, name) {
		return nil, spi.Errorf(spi.StatusServiceNotFound, "service %q has no method %q: it has a pointer receiver and the provider exported a %s value, not a pointer (methods: %s)",
			service, name, mt.typ, strings.Join(mt.names, ", "))
	}
	if why, ok := mt.skipped[name]; ok {
		return nil, spi.Errorf(spi.StatusServiceNotFound, "service %q has no method %q of a servable shape (%s; methods: %s)",
			service, name, why, strings.Join(mt.names, ", "))
	}
	return nil, noMethodError(service, name, mt.names)
}

// decodeArgs reads n arguments from dec into the method's parameter types,
// in buf when it has room (the caller's per-call storage), else in a new
// slice. A wrong count or an undecodable argument is BAD_REQUEST, as is a
// map key naming no field of a struct parameter when the codec's decoder
// can refuse one (a DisallowUnknownFields method: json, msgpack). Such a
// key is refused only to be noticed: the caller decodes the call again
// without the check unless the call is generic (exportedService.lenient,
// unknownField), so a provider ignores a field a newer consumer added; the
// common call, whose keys all match, is decoded once. When generic (the
// call is marked, spi.GenericInvocation) and dec can tell a string from
// bytes (spi.GenericDecoder), a string for a []byte is read as base64, as
// JSON carries bytes; a typed call's string arrives as its own bytes.
func (m *method) decodeArgs(service string, n int, dec spi.Decoder, buf []any, generic bool) ([]any, error) {
	if s, ok := dec.(spi.StrictDecoder); ok {
		s.DisallowUnknownFields() // noticed, then a typo (generic call) or a newer consumer's field
	}
	if g, ok := dec.(spi.GenericDecoder); ok && generic {
		g.GenericArguments()
	}
	return m.decodeFrom(service, n, dec, buf)
}

// countError is spi.ArgumentCountError for a call with n arguments (the
// one sent: first) to the method, naming its parameter types after the
// context: "shop.Shop.Place takes 1 argument (main.Order), got 0".
func (m *method) countError(service string, n int, first any) error {
	types := make([]string, len(m.args))
	for i, t := range m.args {
		types[i] = gotype.String(t)
	}
	return spi.ArgumentCountError(service, m.name, len(m.args), n, first, types...)
}

// decodeFrom reads n arguments from dec as decodeArgs does, with whatever
// rule dec has for map keys naming no struct field (a codec's own:
// ignored).
func (m *method) decodeFrom(service string, n int, dec spi.Decoder, buf []any) ([]any, error) {
	if n != len(m.args) {
		var first any
		if n == 1 {
			_ = dec.Decode(&first) // for the hint of an array holding every argument
		}
		return nil, m.countError(service, n, first)
	}
	args := buf[:0]
	if cap(args) < n {
		args = make([]any, n)
	}
	args = args[:n]
	for i, decode := range m.decode {
		if err := decode(dec, &args[i]); err != nil {
			return nil, argError(service, m.name, i, gotype.String(m.args[i]), err)
		}
	}
	return args, nil
}

// lenient decodes req's arguments again, from the start of its body
// (exchange.Request.Body) with a new decoder of its codec that ignores map
// keys naming no struct field, when strictErr — decodeArgs' error — is the
// BAD_REQUEST of such a key and the call is not generic
// (spi.GenericInvocation): a consumer built with a newer version of a
// struct sent a field this provider's version lacks, which Dubbo's
// Hessian2, protobuf and encoding/json all skip. The first such call of
// each method and field is logged at warn level, naming the consumer
// (unknownFields): the codecs name the first such key in name order, so
// the other keys of the call go unlogged. A generic call (airnode call, or a caller sending
// spi.AttachmentGeneric) keeps strictErr: the key is a typo there. So does
// a request whose body cannot be read again. Only such calls come here.
func (s *exportedService) lenient(pc *providerCall, m *method, req *exchange.Request, strictErr error) ([]any, error) {
	field := spi.UnknownField(strictErr)
	if field == "" || spi.GenericInvocation(req.Attachments) || req.Codec == nil {
		return nil, strictErr
	}
	body := req.Body()
	if body == nil {
		return nil, strictErr
	}
	dec := req.Codec.NewDecoder(body)
	defer spi.Release(dec)
	args, err := m.decodeFrom(s.key, req.NumArgs, dec, pc.args[:])
	if err != nil {
		return nil, err
	}
	if log, last := s.unknown.First(m.name, field); log && pc.ctx.s != nil {
		msg := fmt.Sprintf("%s.%s: consumer %s sent %s; ignored, as any other key the call's struct types lack (a consumer newer than this provider?); logged once per method and field",
			s.key, m.name, req.Remote, field)
		if last {
			msg += fmt.Sprintf("; this is the last: %d fields logged for %s", maxUnknownFields, s.key)
		}
		pc.ctx.s.log.Warn(msg, "service", s.key, "method", m.name, "consumer", req.Remote, "field", field)
	}
	return args, nil
}

// unknownFields is the (method, field) pairs of one exported service that
// consumers sent and its struct types lack, each logged once, at most
// maxUnknownFields (internal/fieldlog, shared with the sdk's plugin
// services).
type unknownFields = fieldlog.Seen

// maxUnknownFields bounds the pairs an exported service remembers and logs.
const maxUnknownFields = fieldlog.Max

// argError is the BAD_REQUEST for argument i of service.method that the
// codec could not decode (err, kept as the cause) into type want ("" for a
// generic argument), written as a Go programmer writes it (internal/gotype:
// []byte, not []uint8; any, not interface {}): spi.ArgumentError's text,
// "demo.Echo.Fail argument 0 (string): want a string, got an integer
// (123)" when the codec says where and what was sent.
func argError(service, method string, i int, want string, err error) *spi.Error {
	return spi.ArgumentError(service, method, i, want, err)
}

// argDecoder decodes one argument from dec into *dst, as a value of its
// parameter type.
type argDecoder func(dec spi.Decoder, dst *any) error

// newArgDecoder returns the decoder of parameters of type t: straight into
// the slot for any, through a typed variable for the common types, through
// reflect.New for the others. All decode into a *t (the codec sees the
// same target); the typed ones save reflect.New and reflect's copy of the
// value (BenchmarkProviderServe: about 40 ns per int or string argument).
func newArgDecoder(t reflect.Type) argDecoder {
	switch {
	case t == typeOfAny:
		return func(dec spi.Decoder, dst *any) error { return dec.Decode(dst) }
	case is[string](t):
		return decodeAs[string]
	case is[int](t):
		return decodeAs[int]
	case is[int64](t):
		return decodeAs[int64]
	case is[float64](t):
		return decodeAs[float64]
	case is[bool](t):
		return decodeAs[bool]
	case is[[]byte](t):
		return decodeAs[[]byte]
	case is[map[string]any](t):
		return decodeAs[map[string]any]
	case is[[]any](t):
		return decodeAs[[]any]
	}
	return func(dec spi.Decoder, dst *any) error {
		p := reflect.New(t)
		if err := dec.Decode(p.Interface()); err != nil {
			return err
		}
		*dst = p.Elem().Interface()
		return nil
	}
}

func decodeAs[T any](dec spi.Decoder, dst *any) error {
	p := new(T)
	if err := dec.Decode(p); err != nil {
		return err
	}
	*dst = *p
	return nil
}

// incoming returns ctx carrying att for spi.IncomingAttachments when the
// method takes a context, att is not empty and ctx does not answer them
// itself (a call served from the network runs with a callCtx, which does,
// at no cost); else ctx itself. Wrapping costs one allocation (an
// in-process call of the local invoker).
func (m *method) incoming(ctx context.Context, att map[string]string) context.Context {
	if !m.ctx || len(att) == 0 {
		return ctx
	}
	if served, _ := ctx.Value(servedKey{}).(bool); served {
		return ctx
	}
	return spi.WithIncomingAttachments(ctx, att)
}

// call invokes the method with args (which may come from filters, so each is
// checked and converted to its parameter type). A returned error becomes
// SERVICE_ERROR with its message, except an *spi.Error whose status does
// not say "did not run" (spi.MethodError, which also names a typed nil
// error and takes a nil *spi.Error for none); a panic becomes
// SERVER_ERROR.
func (m *method) call(ctx context.Context, service string, args []any) (res spi.Result) {
	if len(args) != len(m.args) {
		var first any
		if len(args) == 1 {
			first = args[0]
		}
		return spi.Result{Err: m.countError(service, len(args), first)}
	}
	defer func() {
		if p := recover(); p != nil {
			res = spi.Result{Err: &spi.Error{Status: spi.StatusServerError,
				Message: fmt.Sprintf("panic in %s.%s: %v", service, m.name, p),
				Cause:   &panicError{value: p, stack: debug.Stack()}}}
		}
	}()
	if m.direct != nil {
		if v, ok, err := m.direct(ctx, args); ok {
			if err != nil {
				// nil for a nil *spi.Error: no error
				if err = spi.MethodError(service, m.name, err); err != nil {
					return spi.Result{Err: err}
				}
			}
			return spi.Result{Value: v}
		}
	}
	return m.callReflect(ctx, service, args)
}

// callReflect is call through reflect.Value.Call: every shape, and the
// arguments that need a conversion.
func (m *method) callReflect(ctx context.Context, service string, args []any) spi.Result {
	in := make([]reflect.Value, 0, len(args)+1)
	if m.ctx {
		// As a context.Context, not as the context's concrete type: Call
		// then checks the parameter by type identity instead of walking
		// the concrete type's method set (BenchmarkMethodCall).
		in = append(in, reflect.ValueOf(&ctx).Elem())
	}
	for i, t := range m.args {
		v, err := argValue(args[i], t)
		if err != nil {
			return spi.Result{Err: spi.Errorf(spi.StatusBadRequest, "%s.%s argument %d: %v", service, m.name, i, err)}
		}
		in = append(in, v)
	}
	out := m.fn.Call(in)
	if errv := out[len(out)-1]; !errv.IsNil() {
		// nil for a nil *spi.Error: no error
		if err := spi.MethodError(service, m.name, errv.Interface().(error)); err != nil {
			return spi.Result{Err: err}
		}
	}
	if m.result {
		return spi.Result{Value: out[0].Interface()}
	}
	return spi.Result{}
}

// argValue converts a to a value of type t: nil becomes the zero value, an
// assignable value is used as is, and numbers convert between numeric kinds
// (a generic decoder yields int64 or float64 for any number).
func argValue(a any, t reflect.Type) (reflect.Value, error) {
	if a == nil {
		return reflect.Zero(t), nil
	}
	v := reflect.ValueOf(a)
	if v.Type().AssignableTo(t) {
		return v, nil
	}
	if numeric(v.Kind()) && numeric(t.Kind()) {
		return v.Convert(t), nil
	}
	return reflect.Value{}, fmt.Errorf("got %s, want %s", gotype.String(v.Type()), gotype.String(t))
}

func numeric(k reflect.Kind) bool {
	return k >= reflect.Int && k <= reflect.Float64
}

// panicError carries a recovered panic value and the stack where it
// happened, for the provider's log.
type panicError struct {
	value any
	stack []byte
}

func (p *panicError) Error() string { return fmt.Sprintf("panic: %v\n%s", p.value, p.stack) }

// Direct calls.
//
// reflect.Value.Call costs about 1 µs and 6 allocations per call, and a
// bound method value asserted to its func type still runs through
// reflect's method-value trampoline (about 0.4 µs and an allocation). A
// method of a direct shape is instead called through its method expression
// (the function that takes the receiver first), held as a func whose
// receiver is an unsafe.Pointer: a plain function call and no allocation
// (BenchmarkMethodCall, demo.Echo's Echo: about 700 -> 26 ns and 7 -> 0
// allocations per call). Direct shapes, with any receiver:
//
//	func (T) M(ctx context.Context) (R, error)   or error
//	func (T) M(ctx context.Context, a A) (R, error)   or error
//	func (T) M(ctx context.Context, a A2, b B2) (R2, error)   or error
//
// where A and R are any, a pointer type (*Req), string, int, int64,
// float64, bool, []byte, map[string]any or []any; A2, B2 and R2 are any, a
// pointer type, string or int. Each shape is compiled in (201 shapes,
// about 3 KB each: cmd/airnode grows by 0.65 MB, 2.4 %), hence the short
// lists. Every other shape
// (no context, struct values, other types, three arguments...) is called by
// reflection, and so is a call whose argument is not exactly of its
// parameter's type (an int64 from a filter for an int parameter): the
// reflective path converts it.

// directCall calls one method directly with args (as many as it takes).
// ok is false, and the method was not called, when an argument is neither
// nil nor exactly of its parameter's type.
type directCall func(ctx context.Context, args []any) (v any, ok bool, err error)

// directShape is what a direct call is built from.
type directShape struct {
	fn     reflect.Value  // method expression: the receiver first
	recv   unsafe.Pointer // the receiver
	params []reflect.Type // parameter types after the context
	result reflect.Type   // nil: returns error only
}

// newDirectCall returns the direct call of the method expression fn (of a
// pointer receiver type) on recv, or nil when its shape is not direct.
func newDirectCall(fn reflect.Value, recv unsafe.Pointer) directCall {
	ft := fn.Type()
	if ft.NumIn() < 2 || ft.In(0).Kind() != reflect.Pointer || ft.In(1) != typeOfContext || ft.IsVariadic() {
		return nil
	}
	d := &directShape{fn: fn, recv: recv}
	for j := 2; j < ft.NumIn(); j++ {
		d.params = append(d.params, ft.In(j))
	}
	switch {
	case ft.NumOut() == 2 && ft.Out(1) == typeOfError:
		d.result = ft.Out(0)
	case ft.NumOut() != 1 || ft.Out(0) != typeOfError:
		return nil
	}
	switch len(d.params) {
	case 0:
		return pickR0(d)
	case 1:
		return pickA1(d)
	case 2:
		return pickA2(d)
	}
	return nil
}

// is reports whether t is T.
func is[T any](t reflect.Type) bool { return t == reflect.TypeFor[T]() }

// ptrType returns t when a direct call passes it as an unsafe.Pointer: an
// unnamed pointer type (*Req), rebuilt from its element type. Else nil.
func ptrType(t reflect.Type) reflect.Type {
	if t != nil && t.Kind() == reflect.Pointer && t.Name() == "" {
		return t
	}
	return nil
}

// The pick functions turn the parameter and result types into type
// arguments, one position at a time (unsafe.Pointer standing for every
// pointer type); call0, call1 and call2 build the calls.

func pickR0(d *directShape) directCall {
	switch t := d.result; {
	case t == nil:
		return call0e(d)
	case ptrType(t) != nil:
		return call0[unsafe.Pointer](d)
	case is[any](t):
		return call0[any](d)
	case is[string](t):
		return call0[string](d)
	case is[int](t):
		return call0[int](d)
	case is[int64](t):
		return call0[int64](d)
	case is[float64](t):
		return call0[float64](d)
	case is[bool](t):
		return call0[bool](d)
	case is[[]byte](t):
		return call0[[]byte](d)
	case is[map[string]any](t):
		return call0[map[string]any](d)
	case is[[]any](t):
		return call0[[]any](d)
	}
	return nil
}

func pickA1(d *directShape) directCall {
	switch t := d.params[0]; {
	case ptrType(t) != nil:
		return pickR1[unsafe.Pointer](d)
	case is[any](t):
		return pickR1[any](d)
	case is[string](t):
		return pickR1[string](d)
	case is[int](t):
		return pickR1[int](d)
	case is[int64](t):
		return pickR1[int64](d)
	case is[float64](t):
		return pickR1[float64](d)
	case is[bool](t):
		return pickR1[bool](d)
	case is[[]byte](t):
		return pickR1[[]byte](d)
	case is[map[string]any](t):
		return pickR1[map[string]any](d)
	case is[[]any](t):
		return pickR1[[]any](d)
	}
	return nil
}

func pickR1[A any](d *directShape) directCall {
	switch t := d.result; {
	case t == nil:
		return call1e[A](d)
	case ptrType(t) != nil:
		return call1[A, unsafe.Pointer](d)
	case is[any](t):
		return call1[A, any](d)
	case is[string](t):
		return call1[A, string](d)
	case is[int](t):
		return call1[A, int](d)
	case is[int64](t):
		return call1[A, int64](d)
	case is[float64](t):
		return call1[A, float64](d)
	case is[bool](t):
		return call1[A, bool](d)
	case is[[]byte](t):
		return call1[A, []byte](d)
	case is[map[string]any](t):
		return call1[A, map[string]any](d)
	case is[[]any](t):
		return call1[A, []any](d)
	}
	return nil
}

func pickA2(d *directShape) directCall {
	switch t := d.params[0]; {
	case ptrType(t) != nil:
		return pickB2[unsafe.Pointer](d)
	case is[any](t):
		return pickB2[any](d)
	case is[string](t):
		return pickB2[string](d)
	case is[int](t):
		return pickB2[int](d)
	}
	return nil
}

func pickB2[A any](d *directShape) directCall {
	switch t := d.params[1]; {
	case ptrType(t) != nil:
		return pickR2[A, unsafe.Pointer](d)
	case is[any](t):
		return pickR2[A, any](d)
	case is[string](t):
		return pickR2[A, string](d)
	case is[int](t):
		return pickR2[A, int](d)
	}
	return nil
}

func pickR2[A, B any](d *directShape) directCall {
	switch t := d.result; {
	case t == nil:
		return call2e[A, B](d)
	case ptrType(t) != nil:
		return call2[A, B, unsafe.Pointer](d)
	case is[any](t):
		return call2[A, B, any](d)
	case is[string](t):
		return call2[A, B, string](d)
	case is[int](t):
		return call2[A, B, int](d)
	}
	return nil
}

// call0e, call0, call1e, call1, call2e and call2 build the direct calls of
// methods with no, one and two arguments after the context, returning
// error or (R, error). Each holds the method expression as a func of the
// same parameters and results but for unsafe.Pointer in place of pointer
// types (bind).

func call0e(d *directShape) directCall {
	var f func(unsafe.Pointer, context.Context) error
	bind(d.fn, unsafe.Pointer(&f))
	recv := d.recv
	return func(ctx context.Context, _ []any) (any, bool, error) {
		return nil, true, f(recv, ctx)
	}
}

func call0[R any](d *directShape) directCall {
	var f func(unsafe.Pointer, context.Context) (R, error)
	bind(d.fn, unsafe.Pointer(&f))
	recv, pr := d.recv, ptrType(d.result)
	return func(ctx context.Context, _ []any) (any, bool, error) {
		r, err := f(recv, ctx)
		return resultOf(r, err, pr)
	}
}

func call1e[A any](d *directShape) directCall {
	var f func(unsafe.Pointer, context.Context, A) error
	bind(d.fn, unsafe.Pointer(&f))
	recv, pa := d.recv, ptrType(d.params[0])
	return func(ctx context.Context, args []any) (any, bool, error) {
		a, ok := argOf[A](args[0], pa)
		if !ok {
			return nil, false, nil
		}
		return nil, true, f(recv, ctx, a)
	}
}

func call1[A, R any](d *directShape) directCall {
	var f func(unsafe.Pointer, context.Context, A) (R, error)
	bind(d.fn, unsafe.Pointer(&f))
	recv, pa, pr := d.recv, ptrType(d.params[0]), ptrType(d.result)
	return func(ctx context.Context, args []any) (any, bool, error) {
		a, ok := argOf[A](args[0], pa)
		if !ok {
			return nil, false, nil
		}
		r, err := f(recv, ctx, a)
		return resultOf(r, err, pr)
	}
}

func call2e[A, B any](d *directShape) directCall {
	var f func(unsafe.Pointer, context.Context, A, B) error
	bind(d.fn, unsafe.Pointer(&f))
	recv, pa, pb := d.recv, ptrType(d.params[0]), ptrType(d.params[1])
	return func(ctx context.Context, args []any) (any, bool, error) {
		a, oka := argOf[A](args[0], pa)
		b, okb := argOf[B](args[1], pb)
		if !oka || !okb {
			return nil, false, nil
		}
		return nil, true, f(recv, ctx, a, b)
	}
}

func call2[A, B, R any](d *directShape) directCall {
	var f func(unsafe.Pointer, context.Context, A, B) (R, error)
	bind(d.fn, unsafe.Pointer(&f))
	recv, pa, pb, pr := d.recv, ptrType(d.params[0]), ptrType(d.params[1]), ptrType(d.result)
	return func(ctx context.Context, args []any) (any, bool, error) {
		a, oka := argOf[A](args[0], pa)
		b, okb := argOf[B](args[1], pb)
		if !oka || !okb {
			return nil, false, nil
		}
		r, err := f(recv, ctx, a, b)
		return resultOf(r, err, pr)
	}
}

// bind stores the function fn in the func variable at dst, whose type has
// the same parameters and results as fn's but for unsafe.Pointer where fn
// has a pointer type (the receiver at least; the pick functions chose it
// from fn's type). The two have the same representation and calling
// convention — a pointer is one word whatever it points to, which is how
// reflect itself passes receivers — so calling the variable calls fn.
func bind(fn reflect.Value, dst unsafe.Pointer) {
	reflect.NewAt(fn.Type(), dst).Elem().Set(fn)
}

// argOf returns a as a direct call passes a parameter of type A: nil as
// A's zero value (argValue gives the parameter's zero value), a value of
// exactly type A as it is, and, when A is unsafe.Pointer standing for the
// pointer type ptr, a value of exactly type ptr as its pointer. ok is false
// for anything else, which needs argValue's conversions.
func argOf[A any](a any, ptr reflect.Type) (x A, ok bool) {
	if a == nil {
		return x, true
	}
	if ptr != nil {
		v := reflect.ValueOf(a)
		if v.Type() != ptr {
			return x, false
		}
		x, ok = any(v.UnsafePointer()).(A)
		return x, ok
	}
	x, ok = a.(A)
	return x, ok
}

// resultOf returns a direct call's outcome: r as an any (when R is
// unsafe.Pointer standing for the pointer type ptr, as a ptr), or err. A
// nil *spi.Error is no error (spi.MethodError): r is returned.
func resultOf[R any](r R, err error, ptr reflect.Type) (any, bool, error) {
	if err != nil {
		if se, ok := err.(*spi.Error); !ok || se != nil {
			return nil, true, err
		}
	}
	if ptr != nil {
		p, _ := any(r).(unsafe.Pointer)
		return reflect.NewAt(ptr.Elem(), p).Interface(), true, nil
	}
	return r, true, nil
}

// receiver returns the exported value v as a pointer for direct calls, and
// the pointer type whose method expressions take it: v itself when it is a
// pointer, else a pointer to a copy of v (a value method called through
// the pointer gets a copy of v, as it would anyway).
func receiver(v reflect.Value) (unsafe.Pointer, reflect.Type) {
	if v.Kind() == reflect.Pointer {
		return v.UnsafePointer(), v.Type()
	}
	p := reflect.New(v.Type())
	p.Elem().Set(v)
	return p.UnsafePointer(), p.Type()
}

// plural returns word, with an "s" unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
