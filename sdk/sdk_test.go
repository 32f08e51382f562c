package sdk

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
)

type badTwoValues struct{}

func (badTwoValues) M() (int, int) { return 0, 0 }

type variadic struct{}

func (variadic) M(...int) {}

type ok struct{}

type okAndVariadic struct{ ok }

func (okAndVariadic) Many(...string) error { return nil }

func (ok) Hello(context.Context, string) (string, error) { return "", nil }
func (ok) Quiet()                                        {}

func TestServiceMethodsAreChecked(t *testing.T) {
	for _, c := range []struct {
		s    Service
		want string
	}{
		{Service{Name: "x", Impl: badTwoValues{}}, "second result must be error"},
		{Service{Name: "x", Impl: variadic{}}, "variadic"},
		{Service{Name: "x", Impl: struct{}{}}, "no exported methods"},
		{Service{Name: "", Impl: ok{}}, "required"},
	} {
		if _, err := newServiceHandler([]Service{c.s}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%T: err %v, want %q", c.s.Impl, err, c.want)
		}
	}
	// a variadic method beside a servable one is skipped, with a warning
	// (tester71 #5: it used to fail the whole plugin)
	h, err := newServiceHandler([]Service{{Name: "v.Svc", Impl: okAndVariadic{}}})
	if err != nil {
		t.Fatalf("a variadic method beside Hello: %v", err)
	}
	d := h.Describe()
	want := "v.Svc.Many is not served (a call of it is SERVICE_NOT_FOUND): Many(...string) error: variadic; take a []string instead of ...string"
	if strings.Join(d[0].Methods, ",") != "Hello,Quiet" || len(d[0].Warnings) != 1 || d[0].Warnings[0] != want {
		t.Fatalf("describe %+v: want Methods [Hello Quiet] and the warning %q", d, want)
	}
	codec, _ := pluginrpc.CodecByName(pluginrpc.CodecMsgpack)
	_, err = h.Invoke(context.Background(), "v.Svc", "Many", [][]byte{{0x90}}, codec, nil)
	if se := (*spi.Error)(nil); !errors.As(err, &se) || se.Status != spi.StatusServiceNotFound || !strings.Contains(se.Message, "Many(...string) error: variadic") {
		t.Fatalf("calling Many: %v, want SERVICE_NOT_FOUND saying it is variadic", err)
	}
	h, err = newServiceHandler([]Service{{Name: "b.Svc", Impl: ok{}}, {Name: "a.Svc", Impl: &ok{}}})
	if err != nil {
		t.Fatal(err)
	}
	d = h.Describe()
	if len(d) != 2 || d[0].Name != "a.Svc" || strings.Join(d[1].Methods, ",") != "Hello,Quiet" {
		t.Fatalf("describe %+v", d)
	}
	if strings.Join(d[1].WithoutContext, ",") != "Quiet" { // sent so that plugin check can say so
		t.Fatalf("describe %+v: want WithoutContext [Quiet]", d)
	}
	if _, err := (Plugins{}).impl(); err == nil {
		t.Fatal("empty Plugins accepted")
	}
}

func TestWatchParentFiresWhenTheParentChanges(t *testing.T) {
	fired := make(chan struct{})
	go watchParent(-12345+1e6, 5*time.Millisecond, func() { close(fired) }) // not our parent
	select {
	case <-fired:
	case <-time.After(5 * time.Second):
		t.Fatal("watchParent did not notice")
	}
}

type adder struct{}

func (adder) Add(a, b int) int { return a + b }

type point struct{ X, Y int }

func (adder) Norm1(p point) int { return p.X + p.Y }

// Arguments a generic consumer sent as floats or maps still reach typed
// parameters when the conversion is lossless.
func TestServiceArgumentsAreConvertedLosslessly(t *testing.T) {
	h, err := newServiceHandler([]Service{{Name: "calc", Impl: adder{}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{pluginrpc.CodecMsgpack, pluginrpc.CodecJSON} {
		codec, _ := pluginrpc.CodecByName(name)
		enc := func(v any) []byte { b, _ := codec.Marshal(v); return b }
		out, err := h.Invoke(context.Background(), "calc", "Add", [][]byte{enc(2.0), enc(int8(3))}, codec, nil)
		var n int
		if err != nil || codec.Unmarshal(out, &n) != nil || n != 5 {
			t.Errorf("%s: Add(2.0, 3) = %d, %v", name, n, err)
		}
		out, err = h.Invoke(context.Background(), "calc", "Norm1", [][]byte{enc(map[string]any{"X": 1.0, "Y": 2})}, codec, nil)
		if err != nil || codec.Unmarshal(out, &n) != nil || n != 3 {
			t.Errorf("%s: Norm1 = %d, %v", name, n, err)
		}
		if _, err := h.Invoke(context.Background(), "calc", "Add", [][]byte{enc(2.5), enc(1)}, codec, nil); !errors.Is(err, spi.ErrBadRequest) {
			t.Errorf("%s: Add(2.5, 1) err = %v, want BAD_REQUEST", name, err)
		}
	}
}

type downstream struct{}

func (downstream) Place(context.Context, string) (string, error) {
	// the error of the method's own downstream call, passed on as is
	return "", spi.Errorf(spi.StatusServiceNotFound, "no provider available for t.Inventory")
}

func (downstream) Bad(context.Context, string) (string, error) {
	return "", spi.Errorf(spi.StatusBadRequest, "item must not be empty")
}

// Tester10: a status a method returns never tells the consumer the call
// did not run (failover would run it again elsewhere): a plugin service's
// method is answered as an in-process one (spi.MethodError).
func TestPluginMethodsDidNotRunStatusIsAServiceError(t *testing.T) {
	h, err := newServiceHandler([]Service{{Name: "t.Orders", Impl: downstream{}}})
	if err != nil {
		t.Fatal(err)
	}
	codec, _ := pluginrpc.CodecByName(pluginrpc.CodecMsgpack)
	arg, _ := codec.Marshal("x")
	_, err = h.Invoke(context.Background(), "t.Orders", "Place", [][]byte{arg}, codec, nil)
	if spi.StatusOf(err) != spi.StatusServiceError || !strings.Contains(err.Error(), "t.Orders.Place returned SERVICE_NOT_FOUND: no provider available for t.Inventory") {
		t.Errorf("Place: %v, want SERVICE_ERROR naming the returned SERVICE_NOT_FOUND", err)
	}
	if _, err = h.Invoke(context.Background(), "t.Orders", "Bad", [][]byte{arg}, codec, nil); spi.StatusOf(err) != spi.StatusBadRequest {
		t.Errorf("Bad: %v, want BAD_REQUEST passed through", err)
	}
}

type f18Self struct {
	Name string
	Next *f18Self
	Kids []f18Self
}

type f18Custom struct{ fn func() }

func (f18Custom) MarshalJSON() ([]byte, error) { return []byte("1"), nil }

type f18Skipped struct {
	F func() `json:"-"`
}

type f18Svc struct{}

func (f18Svc) Tree(context.Context, f18Self) (map[string]any, error) { return nil, nil }
func (f18Svc) Custom(context.Context, f18Custom) (any, error)        { return nil, nil }
func (f18Svc) Skip(context.Context, f18Skipped) error                { return nil }
func (f18Svc) Nested(context.Context, map[string][]chan int) error   { return nil }
func (f18Svc) Result(context.Context) (func(), error)                { return nil, nil }
func (*f18Svc) Ptr(context.Context) error                            { return nil }

// tester F18: the sdk tells plugin check about methods no call can use
// (a chan anywhere in an argument, a func result, a pointer-receiver
// method of a value Impl), and not about recursive types, interfaces,
// types that encode themselves or fields the codecs skip.
func TestF18ImplWarnings(t *testing.T) {
	h, err := newServiceHandler([]Service{{Name: "t.S", Impl: f18Svc{}}, {Name: "t.P", Impl: &f18Svc{}}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, d := range h.Describe() {
		got[d.Name] = d.Warnings
	}
	want := []string{
		"t.S.Nested argument 0 has type map[string][]chan int (its value element is a chan int, which no codec can carry): any call that sends a non-null value there fails BAD_REQUEST",
		"t.S.Result result has type func(),",
		"t.S: Ptr of sdk.f18Svc has a pointer receiver",
	}
	if len(got["t.S"]) != len(want) {
		t.Fatalf("warnings of t.S: %q, want %d", got["t.S"], len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(got["t.S"][i], w) {
			t.Errorf("warning %d: %q, want it to start with %q", i, got["t.S"][i], w)
		}
	}
	if len(got["t.P"]) != 2 { // the pointer Impl has Ptr: no receiver warning
		t.Errorf("warnings of t.P (a pointer Impl): %q, want the two type ones", got["t.P"])
	}
}
