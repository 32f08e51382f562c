package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/airnode/airnode/internal/gotype"

	jsoncodec "github.com/airnode/airnode/extensions/codec/json"
	"github.com/airnode/airnode/extensions/codec/msgpack"
	"github.com/airnode/airnode/internal/fieldlog"
	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
)

// Service is a provider implementation served by a plugin: Impl's exported
// methods become the service's methods. A method may take a leading
// context.Context, then any number of arguments that the codec can decode
// into, and return nothing, an error, a value, or a value and an error:
//
//	func (g *Greeter) Hello(ctx context.Context, name string) (string, error)
//
// A variadic method is not served (a call of it is SERVICE_NOT_FOUND
// saying why), as Go's in-process Export skips one; the plugin serves
// the others, and `airnode plugin check` warns of it and of argument and
// result types no call can use (implWarnings).
//
// An error that is an *spi.Error crosses to the consumer with its Status;
// any other error becomes SERVICE_ERROR with its text. A panic becomes
// SERVER_ERROR "panic in <service>.<method>: <value>", as for an
// in-process service; its stack is logged in the plugin's log, not sent.
// A struct argument's keys match its fields ignoring case; a key naming no
// field (a consumer built with a newer version of the struct) is ignored
// and logged once per method and field, except in a generic call
// (spi.AttachmentGeneric, sent by `airnode call`), which gets BAD_REQUEST
// naming the key and listing the fields, as for an in-process service.
type Service struct {
	// Name is the service name consumers call ("greeter.Greeter").
	Name string
	Impl any
}

type attachmentsKey struct{}

// Attachments returns the invocation's attachments inside a service method
// (nil when there are none). The map must not be modified.
func Attachments(ctx context.Context) map[string]string {
	m, _ := ctx.Value(attachmentsKey{}).(map[string]string)
	return m
}

var (
	ctxType = reflect.TypeFor[context.Context]()
	errType = reflect.TypeFor[error]()
)

type method struct {
	fn      reflect.Value
	withCtx bool
	params  []reflect.Type
	value   bool // returns a value
	err     bool // returns an error
}

type serviceHandler struct {
	descs    []pluginrpc.ServiceDesc
	services map[string]map[string]*method
	skipped  map[string]map[string]string // by service and method: why it is not served
	unknown  map[string]*unknownFields    // by service; filled before the first call
}

func newServiceHandler(services []Service) (*serviceHandler, error) {
	h := &serviceHandler{services: map[string]map[string]*method{}, skipped: map[string]map[string]string{}, unknown: map[string]*unknownFields{}}
	for _, s := range services {
		if s.Name == "" || s.Impl == nil {
			return nil, fmt.Errorf("sdk: service %q: Name and Impl are required", s.Name)
		}
		if _, dup := h.services[s.Name]; dup {
			return nil, fmt.Errorf("sdk: service %q listed twice", s.Name)
		}
		methods, skipped, err := reflectMethods(s.Impl)
		if err != nil {
			return nil, fmt.Errorf("sdk: service %q: %w", s.Name, err)
		}
		h.services[s.Name] = methods
		h.skipped[s.Name] = skipped
		h.unknown[s.Name] = &unknownFields{}
		d := pluginrpc.ServiceDesc{Name: s.Name}
		for m, md := range methods {
			d.Methods = append(d.Methods, m)
			if !md.withCtx {
				d.WithoutContext = append(d.WithoutContext, m)
			}
		}
		sort.Strings(d.Methods)
		sort.Strings(d.WithoutContext)
		d.Warnings = implWarnings(s.Name, s.Impl, methods, skipped)
		h.descs = append(h.descs, d)
	}
	sort.Slice(h.descs, func(i, j int) bool { return h.descs[i].Name < h.descs[j].Name })
	return h, nil
}

// reflectMethods returns the methods of impl a plugin serves (its
// exported methods) and the ones it skips, with why: a variadic method,
// which the host's consumers cannot call (they send one value per
// parameter; Go's in-process Export skips it too). It fails for a method
// whose results are not nothing, an error, a value, or a value and an
// error, and when no method is left to serve.
func reflectMethods(impl any) (map[string]*method, map[string]string, error) {
	v := reflect.ValueOf(impl)
	t := v.Type()
	out := map[string]*method{}
	skipped := map[string]string{}
	for i := range t.NumMethod() {
		m := t.Method(i)
		if !m.IsExported() {
			continue
		}
		ft := m.Type // receiver is In(0)
		if ft.IsVariadic() {
			last := gotype.String(ft.In(ft.NumIn() - 1))
			skipped[m.Name] = fmt.Sprintf("%s%s: variadic; take a %s instead of ...%s",
				m.Name, strings.TrimPrefix(gotype.String(v.Method(i).Type()), "func"), last, strings.TrimPrefix(last, "[]"))
			continue
		}
		md := &method{fn: v.Method(i)}
		in := 1
		if ft.NumIn() > 1 && ft.In(1) == ctxType {
			md.withCtx = true
			in = 2
		}
		for ; in < ft.NumIn(); in++ {
			md.params = append(md.params, ft.In(in))
		}
		switch ft.NumOut() {
		case 0:
		case 1:
			if ft.Out(0) == errType {
				md.err = true
			} else {
				md.value = true
			}
		case 2:
			if ft.Out(1) != errType {
				return nil, nil, fmt.Errorf("method %s: a second result must be error", m.Name)
			}
			md.value, md.err = true, true
		default:
			return nil, nil, fmt.Errorf("method %s: at most two results (value, error)", m.Name)
		}
		out[m.Name] = md
	}
	if len(out) == 0 {
		if len(skipped) > 0 {
			why := make([]string, 0, len(skipped))
			for _, name := range slices.Sorted(maps.Keys(skipped)) {
				why = append(why, skipped[name])
			}
			return nil, nil, fmt.Errorf("%T has no method to serve: not served: %s", impl, strings.Join(why, "; "))
		}
		return nil, nil, fmt.Errorf("%T has no exported methods", impl)
	}
	return out, skipped, nil
}

func (h *serviceHandler) Describe() []pluginrpc.ServiceDesc { return h.descs }

func (h *serviceHandler) Invoke(ctx context.Context, service, name string, args [][]byte, codec pluginrpc.Codec, att map[string]string) (out []byte, err error) {
	methods, ok := h.services[service]
	if !ok {
		return nil, spi.Errorf(spi.StatusServiceNotFound, "service %q not provided by this plugin", service)
	}
	m, ok := methods[name]
	if !ok {
		if why, skipped := h.skipped[service][name]; skipped {
			return nil, spi.Errorf(spi.StatusServiceNotFound, "service %q has no method %q of a servable shape (%s)", service, name, why)
		}
		return nil, spi.Errorf(spi.StatusServiceNotFound, "service %q has no method %q", service, name)
	}
	if len(args) != len(m.params) {
		var first any
		if len(args) == 1 {
			_ = decodeArg(codec, args[0], &first, false, false) // for the hint of an array holding every argument
		}
		types := make([]string, len(m.params)) // as the kernel's countError names them
		for i, t := range m.params {
			types[i] = gotype.String(t)
		}
		return nil, spi.ArgumentCountError(service, name, len(m.params), len(args), first, types...)
	}
	in := make([]reflect.Value, 0, len(args)+1)
	if m.withCtx {
		if len(att) > 0 {
			ctx = context.WithValue(ctx, attachmentsKey{}, att)
		}
		in = append(in, reflect.ValueOf(ctx))
	}
	for i, b := range args {
		p, err := h.decodeParam(service, name, m.params[i], codec, b, att)
		if err != nil {
			// what was sent, as the kernel says it for in-process services
			return nil, spi.ArgumentError(service, name, i, gotype.String(m.params[i]), err)
		}
		in = append(in, p)
	}
	defer func() {
		if r := recover(); r != nil {
			err = panicked(service, name, r)
		}
	}()
	res := m.fn.Call(in)
	if m.err {
		if e, _ := res[len(res)-1].Interface().(error); e != nil {
			// as the kernel answers for an in-process method: a status
			// that says "did not run" is not the method's to give, a
			// typed nil error is named, a nil *spi.Error is no error
			if merr := spi.MethodError(service, name, e); merr != nil {
				return nil, merr
			}
		}
	}
	if !m.value {
		return nil, nil
	}
	b, err := codec.Marshal(res[0].Interface())
	if err != nil {
		return nil, spi.Errorf(spi.StatusSerializationError, "%s.%s result: %v", service, name, err)
	}
	return b, nil
}

// panicked is the failure of a service method that panicked with r: a
// SERVER_ERROR worded as an in-process service's ("panic in
// acme.Calc.Boom: kaboom"). The goroutine stack goes to the plugin's log
// (Logger, which the host shows under plugin=<name>), never to the caller:
// it names the plugin's source files and is of no use to a remote consumer.
// The lines are bounded per method, the stack on the first of a burst
// (pluginrpc.LogPanic).
// Call it from the deferred recover, so that the stack is the panic's.
func panicked(service, method string, r any) *spi.Error {
	pluginrpc.LogPanic(logger, service+"."+method, "panic in service method", "service", service, "method", method,
		"panic", fmt.Sprint(r))
	return spi.Errorf(spi.StatusServerError, "panic in %s.%s: %v", service, method, r)
}

// decodeParam decodes b, an argument of service.method, into a new value
// of type t, as the kernel decodes an in-process service's arguments: a
// map key naming no field of a struct is refused first (strict), then,
// unless the call is generic (spi.GenericInvocation(att): airnode call, or
// a caller sending spi.AttachmentGeneric), decoded again ignoring such
// keys, so that a consumer built with a newer version of a struct (one
// more field) can call a plugin built with the older one, as Dubbo's
// Hessian2, protobuf and encoding/json skip a field they do not know. The
// first call of each method and field is logged at warn level through the
// plugin's Logger, naming the consumer (unknownFields). A generic call
// keeps the BAD_REQUEST naming the key and listing the fields: the key is
// a typo there. The common call, whose keys all match, is decoded once.
func (h *serviceHandler) decodeParam(service, method string, t reflect.Type, codec pluginrpc.Codec, b []byte, att map[string]string) (reflect.Value, error) {
	p := reflect.New(t)
	generic := spi.GenericInvocation(att)
	err := decodeArg(codec, b, p.Interface(), true, generic)
	if err == nil {
		return p.Elem(), nil
	}
	field := spi.UnknownField(err)
	if field == "" || generic {
		return reflect.Value{}, err
	}
	p = reflect.New(t) // the strict pass may have set fields
	if err := decodeArg(codec, b, p.Interface(), false, false); err != nil {
		return reflect.Value{}, err
	}
	if log, last := h.unknown[service].First(method, field); log {
		consumer := att[spi.AttachmentRemote]
		if consumer == "" {
			consumer = "(address unknown)"
		}
		msg := fmt.Sprintf("sdk: %s.%s: consumer %s sent %s; ignored, as any other key the call's struct types lack (a consumer newer than this plugin?); logged once per method and field",
			service, method, consumer, field)
		if last {
			msg += fmt.Sprintf("; this is the last: %d fields logged for %s", maxUnknownFields, service)
		}
		logger.Warn(msg, "service", service, "method", method, "consumer", consumer, "field", field)
	}
	return p.Elem(), nil
}

// unknownFields is the (method, field) pairs of one plugin service that
// consumers sent and its struct types lack, each logged once, at most
// maxUnknownFields (internal/fieldlog, shared with the kernel).
type unknownFields = fieldlog.Seen

// maxUnknownFields bounds the pairs a plugin service remembers and logs.
const maxUnknownFields = fieldlog.Max

// decodeArg decodes b into ptr. When the codec refuses (a consumer that
// sent 3.0 for an int, a generic map for a struct), the value is decoded
// generically and converted through JSON, which accepts any lossless
// conversion; the codec's error is returned when that fails too, for
// msgpack as a *msgpack.TypeError (spi.TypeMismatch) when the value's kind
// is what ptr's type cannot hold. Map keys match a struct's fields ignoring
// case; when strict, a key naming no field is an error naming it and the
// fields (as the kernel decodes an in-process service's arguments), else
// it is skipped. When generic (a marked generic call), a string into a
// []byte is base64, as JSON carries bytes (spi.GenericDecoder); else it
// is the string's bytes.
func decodeArg(codec pluginrpc.Codec, b []byte, ptr any, strict, generic bool) error {
	err := unmarshal(codec.Name(), b, ptr, strict, generic)
	if err == nil {
		return nil
	}
	var v any
	if codec.Unmarshal(b, &v) == nil {
		if j, jerr := json.Marshal(v); jerr == nil && unmarshal(pluginrpc.CodecJSON, j, ptr, strict, generic) == nil {
			return nil
		}
	}
	if codec.Name() == pluginrpc.CodecMsgpack {
		return msgpack.TypeErrorOf(b, ptr, err)
	}
	return err
}

// unmarshal decodes b, one value in the codec named codec, into ptr as the
// host's codecs decode an in-process service's arguments (the codec
// packages' decoders): exact integers in generic values, struct fields
// matched ignoring case, unknown ones refused when strict
// (DisallowUnknownFields), skipped otherwise, strings read into byte
// slices as base64 when generic (spi.GenericDecoder).
func unmarshal(codec string, b []byte, ptr any, strict, generic bool) error {
	var d spi.Decoder
	if codec == pluginrpc.CodecMsgpack {
		d = msgpack.Codec{}.NewDecoder(bytes.NewReader(b))
	} else {
		d = jsoncodec.Codec{}.NewDecoder(bytes.NewReader(b))
	}
	defer spi.Release(d)
	if strict {
		d.(interface{ DisallowUnknownFields() }).DisallowUnknownFields()
	}
	if g, ok := d.(spi.GenericDecoder); ok && generic {
		g.GenericArguments()
	}
	return d.Decode(ptr)
}

// plural returns word, with an "s" unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
