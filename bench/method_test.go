package bench_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/airnode/airnode/internal/demo"
)

// BenchmarkMethodCall prices the provider's reflective call of a service
// method (kernel/method.go: reflect.Value.Call with the arguments as
// []reflect.Value) against a direct call of the method value asserted once
// to its func type, the fast path suggested in bench/README.md for the
// common shapes func(context.Context, any) (any, error) and the like.
//
//	go test -run '^$' -bench MethodCall -benchmem ./bench
func BenchmarkMethodCall(b *testing.B) {
	ctx := context.Background()
	arg := any(make([]byte, 100))
	m := reflect.ValueOf(demo.New("n", 100)).MethodByName("Echo")
	b.Run("reflect", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			in := make([]reflect.Value, 0, 2)
			in = append(in, reflect.ValueOf(ctx), reflect.ValueOf(arg))
			out := m.Call(in)
			if !out[1].IsNil() {
				b.Fatal(out[1])
			}
			_ = out[0].Interface()
		}
	})
	b.Run("asserted", func(b *testing.B) {
		b.ReportAllocs()
		fn := m.Interface().(func(context.Context, any) (any, error)) // once, when the method table is built
		for b.Loop() {
			if _, err := fn(ctx, arg); err != nil {
				b.Fatal(err)
			}
		}
	})
}
