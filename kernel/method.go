package kernel

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/airnode/airnode/spi"
)

var (
	typeOfContext = reflect.TypeFor[context.Context]()
	typeOfError   = reflect.TypeFor[error]()
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
}

// methodTable is the cached method set of one exported Go value.
type methodTable struct {
	typ     string             // "*demo.Echo", for messages
	methods map[string]*method // by name
	names   []string           // sorted
}

// newMethodTable reflects impl's exported methods of the shapes
//
//	func (s *T) M(ctx context.Context, args...) (R, error)
//	func (s *T) M(ctx context.Context, args...) error
//	func (s *T) M(args...) (R, error)
//	func (s *T) M(args...) error
//
// Other exported methods, and variadic ones, are skipped. It fails when impl
// is nil or has no method of these shapes.
func newMethodTable(impl any) (*methodTable, error) {
	if impl == nil {
		return nil, errors.New("kernel: export: nil service implementation")
	}
	v := reflect.ValueOf(impl)
	t := v.Type()
	mt := &methodTable{typ: t.String(), methods: map[string]*method{}}
	for i := range t.NumMethod() {
		m := t.Method(i)
		if !m.IsExported() {
			continue
		}
		ft := m.Type // includes the receiver as In(0)
		if ft.IsVariadic() {
			continue
		}
		var out bool
		switch {
		case ft.NumOut() == 1 && ft.Out(0) == typeOfError:
		case ft.NumOut() == 2 && ft.Out(1) == typeOfError:
			out = true
		default:
			continue
		}
		me := &method{name: m.Name, fn: v.Method(i), result: out}
		first := 1
		if ft.NumIn() > 1 && ft.In(1) == typeOfContext {
			me.ctx = true
			first = 2
		}
		for j := first; j < ft.NumIn(); j++ {
			me.args = append(me.args, ft.In(j))
		}
		mt.methods[m.Name] = me
		mt.names = append(mt.names, m.Name)
	}
	if len(mt.names) == 0 {
		return nil, fmt.Errorf("kernel: export %s: no exported method of shape func(ctx context.Context, args...) (R, error) or error", mt.typ)
	}
	sort.Strings(mt.names)
	return mt, nil
}

// lookup returns the method named name, or a SERVICE_NOT_FOUND error naming
// it and the service.
func (mt *methodTable) lookup(service, name string) (*method, error) {
	if m, ok := mt.methods[name]; ok {
		return m, nil
	}
	return nil, spi.Errorf(spi.StatusServiceNotFound, "service %q has no method %q (methods: %s)",
		service, name, strings.Join(mt.names, ", "))
}

// decodeArgs reads n arguments from dec into the method's parameter types.
// A wrong count or an undecodable argument is BAD_REQUEST.
func (m *method) decodeArgs(service string, n int, dec spi.Decoder) ([]any, error) {
	if n != len(m.args) {
		return nil, spi.Errorf(spi.StatusBadRequest, "%s.%s takes %d argument(s), got %d", service, m.name, len(m.args), n)
	}
	args := make([]any, n)
	for i, t := range m.args {
		p := reflect.New(t)
		if err := dec.Decode(p.Interface()); err != nil {
			return nil, spi.Errorf(spi.StatusBadRequest, "%s.%s argument %d: cannot decode into %s: %v", service, m.name, i, t, err)
		}
		args[i] = p.Elem().Interface()
	}
	return args, nil
}

// call invokes the method with args (which may come from filters, so each is
// checked and converted to its parameter type). A returned error becomes
// SERVICE_ERROR with its message unless it is already an *spi.Error; a panic
// becomes SERVER_ERROR.
func (m *method) call(ctx context.Context, service string, args []any) (res spi.Result) {
	if len(args) != len(m.args) {
		return spi.Result{Err: spi.Errorf(spi.StatusBadRequest, "%s.%s takes %d argument(s), got %d", service, m.name, len(m.args), len(args))}
	}
	in := make([]reflect.Value, 0, len(args)+1)
	if m.ctx {
		in = append(in, reflect.ValueOf(ctx))
	}
	for i, t := range m.args {
		v, err := argValue(args[i], t)
		if err != nil {
			return spi.Result{Err: spi.Errorf(spi.StatusBadRequest, "%s.%s argument %d: %v", service, m.name, i, err)}
		}
		in = append(in, v)
	}
	defer func() {
		if p := recover(); p != nil {
			res = spi.Result{Err: &spi.Error{Status: spi.StatusServerError,
				Message: fmt.Sprintf("panic in %s.%s: %v", service, m.name, p),
				Cause:   &panicError{value: p, stack: debug.Stack()}}}
		}
	}()
	out := m.fn.Call(in)
	errv := out[len(out)-1]
	if !errv.IsNil() {
		return spi.Result{Err: serviceError(errv.Interface().(error))}
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
	return reflect.Value{}, fmt.Errorf("got %T, want %s", a, t)
}

func numeric(k reflect.Kind) bool {
	return k >= reflect.Int && k <= reflect.Float64
}

// serviceError keeps an *spi.Error's status and turns any other error into
// SERVICE_ERROR with its message.
func serviceError(err error) error {
	var se *spi.Error
	if errors.As(err, &se) {
		return err
	}
	return &spi.Error{Status: spi.StatusServiceError, Message: err.Error(), Cause: err}
}

// panicError carries a recovered panic value and the stack where it
// happened, for the provider's log.
type panicError struct {
	value any
	stack []byte
}

func (p *panicError) Error() string { return fmt.Sprintf("panic: %v\n%s", p.value, p.stack) }
