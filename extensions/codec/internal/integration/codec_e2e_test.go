package integration

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"reflect"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// Point is a struct argument, as a plugin author's or Go user's.
type Point struct{ X, Y int }

// Calc is the service under test: it hands back what it got, and the type
// the provider saw.
type Calc struct{}

// Any returns x and its Go type as the provider decoded it.
func (Calc) Any(_ context.Context, x any) ([]any, error) {
	return []any{x, reflect.TypeOf(x).String()}, nil
}

// Int64 returns x.
func (Calc) Int64(_ context.Context, x int64) (int64, error) { return x, nil }

// Newer returns a result with a field an older consumer's struct lacks.
func (Calc) Newer(context.Context) (map[string]any, error) {
	return map[string]any{"x": 1, "Added": true}, nil
}

// Norm returns the squared length of p.
func (Calc) Norm(_ context.Context, p Point) (int, error) { return p.X*p.X + p.Y*p.Y, nil }

// export starts a provider node exporting Calc with codec and returns a
// reference of a consumer node calling it directly in the same codec.
func export(t *testing.T, codec string) *kernel.Reference {
	t.Helper()
	return exportAs(t, Calc{}, "acme.Calc", codec)
}

// exportAs starts a provider node exporting impl as service with codec
// and returns a reference of a consumer node calling it directly in the
// same codec.
func exportAs(t *testing.T, impl any, service, codec string) *kernel.Reference {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cat := bundle.Catalogs()
	p := kernel.NewNode(cat, kernel.WithLogger(quiet), kernel.WithShutdownWait(0))
	t.Cleanup(func() { _ = p.Close() })
	e, err := p.Export(ctx, impl, spi.MustParse("airnode://127.0.0.1:0/"+service+"?codec="+codec))
	if err != nil {
		t.Fatal(err)
	}
	c := kernel.NewNode(cat, kernel.WithLogger(quiet))
	t.Cleanup(func() { _ = c.Close() })
	r, err := c.Refer(ctx, spi.MustParse("airnode://"+e.URL().Address()+"/"+service+"?timeout=5s&codec="+codec), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// New-user finding: with codec=json an integer above 2^53 passed as any
// reached the provider as float64 (9007199254740993 became ...992), and
// with msgpack an int64 passed as any came back uint64. Now both codecs
// give the provider and the consumer int64 for integers that fit, uint64
// above MaxInt64, float64 for fractions, at any depth; typed parameters
// keep working.
func TestGenericIntegersExactEndToEnd(t *testing.T) {
	cases := []struct {
		arg      any
		want     any
		provider string // the Go type the provider saw
	}{
		{int64(9007199254740993), int64(9007199254740993), "int64"},
		{int64(200), int64(200), "int64"},
		{int64(-9007199254740993), int64(-9007199254740993), "int64"},
		{uint64(math.MaxUint64), uint64(math.MaxUint64), "uint64"},
		{2.5, 2.5, "float64"},
		{map[string]any{"n": int64(9007199254740993), "l": []any{int64(1), 0.5}},
			map[string]any{"n": int64(9007199254740993), "l": []any{int64(1), 0.5}}, "map[string]interface {}"},
	}
	for _, codec := range []string{"json", "msgpack"} {
		t.Run(codec, func(t *testing.T) {
			r := export(t, codec)
			for _, c := range cases {
				got, err := r.Invoke(ctxT(t), "Any", c.arg)
				if err != nil {
					t.Fatalf("Any(%#v): %v", c.arg, err)
				}
				if want := []any{c.want, c.provider}; !reflect.DeepEqual(got, want) {
					t.Errorf("Any(%#v) = %#v, want %#v", c.arg, got, want)
				}
			}
			var n int64
			if err := r.Call(ctxT(t), "Int64", []any{int64(9007199254740993)}, &n); err != nil || n != 9007199254740993 {
				t.Errorf("Int64: %d, %v", n, err)
			}
		})
	}
}

// New-user finding: Norm({"x":3,"y":4}) on Point{X, Y int} returned 0. Keys
// now match fields ignoring case (as encoding/json), and a key naming no
// field is, in a generic call (the "generic" attachment, as `airnode call`
// sends it), a BAD_REQUEST naming it, the struct's fields and the nearest.
// In any other call the key is ignored (tester14 finding 1: a consumer
// newer than its provider may send a field the provider lacks).
func TestStructArgumentFieldsEndToEnd(t *testing.T) {
	for _, codec := range []string{"json", "msgpack"} {
		t.Run(codec, func(t *testing.T) {
			r := export(t, codec)
			for _, arg := range []any{map[string]any{"X": 3, "Y": 4}, map[string]any{"x": 3, "y": 4}, Point{3, 4}} {
				var n int
				if err := r.Call(ctxT(t), "Norm", []any{arg}, &n); err != nil || n != 25 {
					t.Errorf("Norm(%v) = %d, %v; want 25", arg, n, err)
				}
			}
			cases := []struct {
				arg  map[string]any
				want string
			}{
				{map[string]any{"X": 3, "Z": 4}, `acme.Calc.Norm argument 0 (integration.Point): got a map with unknown field "Z" in Point (fields: X, Y)`},
				{map[string]any{"Xx": 3, "Y": 4}, `acme.Calc.Norm argument 0 (integration.Point): got a map with unknown field "Xx" in Point (fields: X, Y); did you mean "X"?`},
			}
			for _, c := range cases {
				_, err := r.Invoke(spi.WithAttachments(ctxT(t), spi.AttachmentGeneric, spi.GenericTrue), "Norm", c.arg)
				var se *spi.Error
				if !errors.As(err, &se) || se.Status != spi.StatusBadRequest || se.Message != c.want {
					t.Errorf("generic Norm(%v): %v, want BAD_REQUEST %q", c.arg, err, c.want)
				}
			}
			// not generic: the unknown key is ignored
			var n int
			if err := r.Call(ctxT(t), "Norm", []any{map[string]any{"X": 3, "Z": 4}}, &n); err != nil || n != 9 {
				t.Errorf("Norm({X:3, Z:4}) = %d, %v; want 9, the key Z ignored", n, err)
			}
			// a result is read leniently: a consumer's older struct ignores a field the provider added
			var old struct{ X int }
			if err := r.Call(ctxT(t), "Newer", nil, &old); err != nil || old.X != 1 {
				t.Errorf("Newer into an older struct: %+v, %v", old, err)
			}
		})
	}
}

// Held is a result with an any field, as a Go service returns it.
type Held struct {
	V    any
	List []any
	Map  map[string]any
}

// Held returns a Held whose any values carry n.
func (Calc) Held(_ context.Context, n int) (Held, error) {
	return Held{V: map[string]any{"n": n}, List: []any{n, map[string]any{"n": n}}, Map: map[string]any{"n": []any{n}}}, nil
}

// Another engineer's finding: a Go consumer calling twice with the same
// reply variable failed the second call with CLIENT_ERROR "panic calling
// ..." under msgpack (its any field held the first reply's map, which
// msgpack decoded into in place: reflect.Value.Addr of unaddressable
// value). Both codecs now read the second reply as the first, and an any
// field the caller set to a non-nil pointer is decoded into.
func TestReplyReusedWithValuesInInterfacesEndToEnd(t *testing.T) {
	for _, codec := range []string{"json", "msgpack"} {
		t.Run(codec, func(t *testing.T) {
			r := export(t, codec)
			var reply Held
			for n := int64(1); n <= 3; n++ {
				if err := r.Call(ctxT(t), "Held", []any{n}, &reply); err != nil {
					t.Fatalf("call %d: %v", n, err)
				}
				want := Held{V: map[string]any{"n": n}, List: []any{n, map[string]any{"n": n}}, Map: map[string]any{"n": []any{n}}}
				if !reflect.DeepEqual(reply, want) {
					t.Fatalf("call %d: %#v, want %#v", n, reply, want)
				}
			}
			var into struct{ N int }
			reply.V = &into
			if err := r.Call(ctxT(t), "Held", []any{4}, &reply); err != nil || reply.V != any(&into) || into.N != 4 {
				t.Errorf("into the caller's pointer: V = %#v (%+v), %v; want the pointer holding N 4", reply.V, into, err)
			}
		})
	}
}
