package kernel

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/airnode/airnode/spi"
)

// Bind fills the func fields of the struct client points to with stubs
// that call the reference's service, so a consumer calls a typed Go
// function instead of naming the method in a string (dubbo-go's consumer
// struct of func fields; rpcx and Kitex get the same from an interface or
// an IDL):
//
//	type GreeterClient struct {
//		Hello func(ctx context.Context, name string) (string, error)
//		Ping  func(ctx context.Context) error
//		Bye   func(ctx context.Context, name string) (string, error) `airnode:"Goodbye"`
//	}
//	var greeter GreeterClient
//	err := ref.Bind(&greeter)
//	s, err := greeter.Hello(ctx, "airnode")
//
// Each exported field of func type is a method, named by the field or by
// its `airnode:"Name"` tag (`airnode:"-"` leaves the field alone), of
// shape func(context.Context, args...) (R, error) or
// func(context.Context, args...) error, as an exported method's; a call
// of the stub is Call(ctx, name, args, &r) and fails as Call does
// (*spi.Error, the zero R). Fields of other types are left alone. Bind
// returns an error naming every field whose func type has another shape
// (no context first, a variadic parameter, no error last, more than two
// results, a parameter or result no codec can send, as Export refuses in
// a method), or when client is not a non-nil pointer to a struct with at
// least one method field; it sets nothing then. It does not check that
// the provider has the methods: a call of one it lacks fails
// SERVICE_NOT_FOUND, naming the methods it has. A stub makes 6
// allocations (about 180 B) per call more than Call (reflect.MakeFunc's
// arguments and results; BenchmarkBind: 19 against 13), small beside a
// call's round trip.
func (r *Reference) Bind(client any) error {
	v := reflect.ValueOf(client)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("kernel: Bind needs a non-nil pointer to a struct of func fields, got %T", client)
	}
	s := v.Elem()
	t := s.Type()
	type stub struct {
		field  int
		method string
	}
	var stubs []stub
	var problems []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Type.Kind() != reflect.Func {
			continue
		}
		name := f.Name
		if tag, ok := f.Tag.Lookup("airnode"); ok {
			if tag == "-" {
				continue
			}
			if tag == "" {
				problems = append(problems, fmt.Sprintf("field %s: empty airnode tag (want a method name, or \"-\" to skip the field)", f.Name))
				continue
			}
			name = tag
		}
		if why := stubShape(f.Type); why != "" {
			problems = append(problems, fmt.Sprintf("field %s %s: %s", f.Name, f.Type, why))
			continue
		}
		stubs = append(stubs, stub{i, name})
	}
	if len(problems) > 0 {
		return fmt.Errorf("kernel: Bind %T: %s (a method field is func(context.Context, args...) (R, error) or func(context.Context, args...) error)",
			client, strings.Join(problems, "; "))
	}
	if len(stubs) == 0 {
		return fmt.Errorf("kernel: Bind %T: no exported field of func type to bind (want fields such as Hello func(context.Context, string) (string, error))", client)
	}
	for _, st := range stubs {
		s.Field(st.field).Set(r.stub(st.method, t.Field(st.field).Type))
	}
	return nil
}

// stubShape returns why ft cannot be a method stub, or "" when it can.
func stubShape(ft reflect.Type) string {
	switch {
	case ft.NumIn() == 0 || ft.In(0) != typeOfContext:
		return "the first parameter must be context.Context"
	case ft.IsVariadic():
		return "a variadic parameter cannot be sent"
	case ft.NumOut() == 0 || ft.NumOut() > 2 || ft.Out(ft.NumOut()-1) != typeOfError:
		return "the results must be (R, error) or error"
	}
	return unservable(ft, 1) // what Export refuses in a method, the same words
}

// stub returns a function of type ft calling method on r (see Bind).
func (r *Reference) stub(method string, ft reflect.Type) reflect.Value {
	var result reflect.Type // nil: the method returns only an error
	if ft.NumOut() == 2 {
		result = ft.Out(0)
	}
	nilError := reflect.Zero(typeOfError)
	return reflect.MakeFunc(ft, func(in []reflect.Value) []reflect.Value {
		ctx, _ := in[0].Interface().(context.Context)
		if ctx == nil {
			err := spi.Errorf(spi.StatusClientError, "kernel: %s.%s called with a nil context", r.key, method)
			return stubResults(result, reflect.Value{}, err)
		}
		args := make([]any, len(in)-1)
		for i, a := range in[1:] {
			args[i] = a.Interface()
		}
		if result == nil {
			return []reflect.Value{errorValue(r.Call(ctx, method, args, nil), nilError)}
		}
		reply := reflect.New(result)
		err := r.Call(ctx, method, args, reply.Interface())
		return stubResults(result, reply.Elem(), err)
	})
}

// stubResults returns a stub's results: value (or R's zero value when err
// is not nil or value is invalid) and err; result nil means error alone.
func stubResults(result reflect.Type, value reflect.Value, err error) []reflect.Value {
	ev := errorValue(err, reflect.Zero(typeOfError))
	if result == nil {
		return []reflect.Value{ev}
	}
	if err != nil || !value.IsValid() {
		value = reflect.Zero(result)
	}
	return []reflect.Value{value, ev}
}

// errorValue returns err as a reflect.Value of type error; nilError when
// err is nil (an interface's zero value, not a typed nil).
func errorValue(err error, nilError reflect.Value) reflect.Value {
	if err == nil {
		return nilError
	}
	v := reflect.New(typeOfError).Elem()
	v.Set(reflect.ValueOf(&err).Elem())
	return v
}
