package sdk_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/pluginhost"
	"github.com/airnode/airnode/spi"
)

// oddKey is the consumer's copy of the plugin's map key struct.
type oddKey struct{ A, B int }

// tester71 #5: a service plugin's warnings (what `airnode plugin check`
// prints) name every argument type that no decoded value fills — an
// interface with methods (io.Reader), a complex number, a map keyed by a
// struct, an array, a float or a bool, as they named a chan — say what is
// true of them (a call with null, or an empty map, passes), and name a
// variadic method, which the sdk skips instead of refusing to start
// (the plugin used to exit before its handshake). Each warning is proven
// by real calls of a real plugin process (testdata/oddtypes) exported by a
// provider node, over loopback TCP, in both codecs: the value fails as
// warned, null passes; the odd-looking types that work (error,
// fmt.Stringer, maps keyed by integers, netip.Addr, *string, any) are not
// warned about and their calls succeed.
func TestOddTypesAreWarnedAndFailAsWarned(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "oddtypes")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "./testdata/oddtypes").CombinedOutput(); err != nil {
		t.Fatalf("building the test plugin: %v\n%s", err, out)
	}
	pr, err := pluginhost.NewProbe(ctx, config.Plugin{Command: bin})
	if err != nil {
		t.Fatalf("the plugin with a variadic method did not start: %v", err)
	}
	var methods, warnings []string
	for _, d := range pr.Provides {
		for _, s := range d.Services {
			methods = append(methods, s.Methods...)
			warnings = append(warnings, s.Warnings...)
		}
	}
	pr.Close()
	if slices.Contains(methods, "Sum") || !slices.Contains(methods, "Ok") {
		t.Errorf("methods %v: want Ok and the others served, Sum (variadic) not", methods)
	}
	warned := map[string]string{}
	for _, w := range warnings {
		name, _, _ := strings.Cut(strings.TrimPrefix(w, "acme.Odd."), " ")
		warned[name] = w
	}
	for name, want := range map[string]string{
		"Reader":      "acme.Odd.Reader argument 0 has type io.Reader, an interface with methods, which no decoded value has: any call that sends a non-null value there fails BAD_REQUEST; declare a concrete type, or any",
		"Held":        "acme.Odd.Held argument 0 has type main.Holder (its field R is an io.Reader, an interface with methods, which no decoded value has): any call that sends a non-null value there fails BAD_REQUEST; declare a concrete type, or any",
		"Cplx":        "acme.Odd.Cplx argument 0 has type complex64, which no codec can carry: any call that sends a non-null value there fails BAD_REQUEST; use a type of data (numbers, strings, slices, maps, structs)",
		"Cplx128":     "acme.Odd.Cplx128 argument 0 has type complex128, which no codec can carry: any call that sends a non-null value there fails BAD_REQUEST",
		"Chan":        "acme.Odd.Chan argument 0 has type chan int, which no codec can carry: any call that sends a non-null value there fails BAD_REQUEST",
		"StructKey":   "acme.Odd.StructKey argument 0 has type map[main.Key]int, whose main.Key keys cannot be read from the strings consumers send as map keys: any call that sends a non-empty map there fails BAD_REQUEST; use a map keyed by strings, integers or an encoding.TextUnmarshaler type",
		"ArrayKey":    "acme.Odd.ArrayKey argument 0 has type map[[2]int]int, whose [2]int keys cannot be read",
		"FloatKey":    "acme.Odd.FloatKey argument 0 has type map[float64]int, whose float64 keys cannot be read",
		"BoolKey":     "acme.Odd.BoolKey argument 0 has type map[bool]int, whose bool keys cannot be read",
		"CplxResult":  "acme.Odd.CplxResult result has type complex128, which no codec can carry: every call that returns without an error fails SERIALIZATION_ERROR",
		"ChanResult":  "acme.Odd.ChanResult result has type chan int, which no codec can carry: every call that returns without an error fails SERIALIZATION_ERROR",
		"HooksResult": "acme.Odd.HooksResult result has type main.Hooks (its field F is a func(), which no codec can carry): any call whose result holds one, even a nil one, fails SERIALIZATION_ERROR",
		"Sum":         "acme.Odd.Sum is not served (a call of it is SERVICE_NOT_FOUND): Sum(context.Context, ...int) (int, error): variadic; take a []int instead of ...int",
	} {
		if !strings.HasPrefix(warned[name], want) {
			t.Errorf("warning for %s:\n%q\nwant it to begin\n%q", name, warned[name], want)
		}
		delete(warned, name)
	}
	for name, w := range warned { // Ok, ErrArg, Stringer, IntKey, UintKey, AddrKey, PtrKey, AnyKey, ReaderResult work
		t.Errorf("warning for %s, which works: %s", name, w)
	}

	addr, consumer := exportPlugin(t, ctx, "oddtypes", "acme.Odd", io.Discard)
	for _, codec := range []string{"msgpack", "json"} {
		ref, err := consumer.Refer(ctx, spi.MustParse("airnode://"+addr+"/acme.Odd?timeout=5s&codec="+codec), spi.URL{})
		if err != nil {
			t.Fatal(err)
		}
		// what each warned argument says fails, fails; null or an empty map passes
		for _, c := range []struct {
			method   string
			bad, ok  any
			badCause string
		}{
			{"Reader", "x", nil, "io.Reader is an interface with methods"},
			{"Reader", map[string]any{}, nil, "io.Reader is an interface with methods"},
			{"Held", map[string]any{"N": 1, "R": "x"}, map[string]any{"N": 1, "R": nil}, "io.Reader is an interface with methods"},
			{"Cplx", 1.5, nil, "complex64"},
			{"Cplx128", "1+2i", nil, "complex128"},
			{"Cplx128", []any{1, 2}, nil, "complex128"},
			{"Chan", 1, nil, "chan int"},
			{"StructKey", map[oddKey]int{{1, 2}: 3}, map[string]int{}, "map[main.Key]int"},
			{"StructKey", map[string]int{`{"A":1,"B":2}`: 3}, nil, "map[main.Key]int"},
			{"ArrayKey", map[string]int{"[1,2]": 3}, map[string]int{}, "map[[2]int]int"},
			{"FloatKey", map[string]int{"1.5": 3}, map[string]int{}, "map[float64]int"},
			{"BoolKey", map[string]int{"true": 3}, map[string]int{}, "map[bool]int"},
		} {
			_, err := ref.Invoke(ctx, c.method, c.bad)
			var se *spi.Error
			if codec == "json" && c.method == "StructKey" && err != nil && strings.Contains(err.Error(), "unsupported type") {
				// encoding/json cannot even encode map[oddKey]int: SERIALIZATION_ERROR at the consumer
			} else if !errors.As(err, &se) || se.Status != spi.StatusBadRequest || !strings.Contains(se.Message, c.badCause) {
				t.Errorf("%s: %s(%#v): %v, want BAD_REQUEST naming %s", codec, c.method, c.bad, err, c.badCause)
			}
			if _, err := ref.Invoke(ctx, c.method, c.ok); err != nil {
				t.Errorf("%s: %s(%#v): %v, want it to pass (the warning says only a non-null value fails)", codec, c.method, c.ok, err)
			}
		}
		for _, m := range []string{"CplxResult", "ChanResult", "HooksResult"} {
			_, err := ref.Invoke(ctx, m)
			var se *spi.Error
			if !errors.As(err, &se) || se.Status != spi.StatusSerializationError {
				t.Errorf("%s: %s(): %v, want SERIALIZATION_ERROR", codec, m, err)
			}
		}
		_, err = ref.Invoke(ctx, "Sum", []int{1, 2})
		want := `service "acme.Odd" has no method "Sum" of a servable shape (Sum(context.Context, ...int) (int, error): variadic; take a []int instead of ...int)`
		var se *spi.Error
		if !errors.As(err, &se) || se.Status != spi.StatusServiceNotFound || se.Message != want {
			t.Errorf("%s: Sum: %v, want SERVICE_NOT_FOUND %q", codec, err, want)
		}
		// the odd-looking types that work, and are not warned about
		for _, c := range []struct {
			method string
			arg    any
			want   string
		}{
			{"Ok", "hi", "hi"},
			{"ErrArg", "boom", "boom"}, // a string decodes into an error
			{"IntKey", map[string]int{"1": 5}, "5"},
			{"UintKey", map[uint8]int{1: 5}, "5"},
			{"AddrKey", map[string]int{"10.0.0.1": 5}, "5"},
			{"PtrKey", map[string]int{"x": 1}, "1"},
			{"AnyKey", map[string]int{"x": 7}, "7"},
		} {
			got, err := ref.Invoke(ctx, c.method, c.arg)
			if err != nil || fmt.Sprint(got) != c.want {
				t.Errorf("%s: %s(%#v) = %v, %v; want %s", codec, c.method, c.arg, got, err, c.want)
			}
		}
		if codec == "msgpack" { // a time.Time is a fmt.Stringer, and msgpack carries it as one
			if got, err := ref.Invoke(ctx, "Stringer", time.Now()); err != nil || got != true {
				t.Errorf("msgpack: Stringer(time.Now()) = %v, %v; want true", got, err)
			}
		}
	}
}
