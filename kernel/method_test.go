package kernel

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/spi"
)

type calc struct{}

func (calc) Add(ctx context.Context, a, b int) (int, error) { return a + b, nil }
func (calc) Neg(a float64) (float64, error)                 { return -a, nil }
func (calc) Check(ctx context.Context, ok bool) error {
	if !ok {
		return errors.New("not ok")
	}
	return nil
}
func (calc) Boom(ctx context.Context) (int, error) { panic("boom") }
func (calc) Typed(ctx context.Context) error {
	return spi.Errorf(spi.StatusBadRequest, "typed")
}
func (calc) NotRPC(a int) int                             { return a }
func (calc) Variadic(ctx context.Context, a ...int) error { return nil }

// sliceDecoder decodes pre-set values, as a codec would.
type sliceDecoder struct{ vals []any }

func (d *sliceDecoder) Decode(v any) error {
	if len(d.vals) == 0 {
		return errors.New("no more values")
	}
	x := d.vals[0]
	d.vals = d.vals[1:]
	rv := reflect.ValueOf(v).Elem()
	xv := reflect.ValueOf(x)
	if !xv.Type().AssignableTo(rv.Type()) {
		return errors.New("type mismatch")
	}
	rv.Set(xv)
	return nil
}

func TestMethodTable(t *testing.T) {
	mt, err := newMethodTable(calc{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Add", "Boom", "Check", "Neg", "Typed"}
	if !reflect.DeepEqual(mt.names, want) {
		t.Fatalf("methods = %v, want %v", mt.names, want)
	}
	ctx := context.Background()
	m, _ := mt.lookup("calc", "Add")
	if r := m.call(ctx, "calc", []any{int64(2), 3}); r.Err != nil || r.Value != 5 {
		t.Fatalf("Add = %+v", r)
	}
	m, _ = mt.lookup("calc", "Neg")
	if r := m.call(ctx, "calc", []any{1.5}); r.Err != nil || r.Value != -1.5 {
		t.Fatalf("Neg = %+v", r)
	}
	m, _ = mt.lookup("calc", "Check")
	if r := m.call(ctx, "calc", []any{true}); r.Err != nil || r.Value != nil {
		t.Fatalf("Check(true) = %+v", r)
	}
	r := m.call(ctx, "calc", []any{false})
	if spi.StatusOf(r.Err) != spi.StatusServiceError || r.Err.Error() != "SERVICE_ERROR: not ok" {
		t.Fatalf("Check(false) = %v", r.Err)
	}
	if r := m.call(ctx, "calc", []any{"yes"}); spi.StatusOf(r.Err) != spi.StatusBadRequest {
		t.Fatalf("Check(string) = %v", r.Err)
	}
	if r := m.call(ctx, "calc", nil); spi.StatusOf(r.Err) != spi.StatusBadRequest {
		t.Fatalf("Check() = %v", r.Err)
	}
	m, _ = mt.lookup("calc", "Boom")
	if r := m.call(ctx, "calc", nil); spi.StatusOf(r.Err) != spi.StatusServerError {
		t.Fatalf("Boom = %v", r.Err)
	}
	m, _ = mt.lookup("calc", "Typed")
	if r := m.call(ctx, "calc", nil); spi.StatusOf(r.Err) != spi.StatusBadRequest {
		t.Fatalf("Typed = %v", r.Err)
	}
	if _, err := mt.lookup("calc", "Nope"); spi.StatusOf(err) != spi.StatusServiceNotFound || !strings.Contains(err.Error(), `"Nope"`) {
		t.Fatalf("lookup(Nope) = %v", err)
	}
}

func TestMethodDecodeArgs(t *testing.T) {
	mt, _ := newMethodTable(calc{})
	m, _ := mt.lookup("calc", "Add")
	args, err := m.decodeArgs("calc", 2, &sliceDecoder{vals: []any{1, 2}}, nil, false)
	if err != nil || !reflect.DeepEqual(args, []any{1, 2}) {
		t.Fatalf("decodeArgs = %v, %v", args, err)
	}
	if _, err := m.decodeArgs("calc", 1, &sliceDecoder{vals: []any{1}}, nil, false); spi.StatusOf(err) != spi.StatusBadRequest {
		t.Fatalf("wrong count: %v", err)
	}
	if _, err := m.decodeArgs("calc", 2, &sliceDecoder{vals: []any{1, "x"}}, nil, false); spi.StatusOf(err) != spi.StatusBadRequest {
		t.Fatalf("wrong type: %v", err)
	}
}

func TestMethodTableRejects(t *testing.T) {
	if _, err := newMethodTable(nil); err == nil {
		t.Fatal("nil accepted")
	}
	if _, err := newMethodTable(struct{}{}); err == nil {
		t.Fatal("no methods accepted")
	}
}

// shapes has methods of every direct shape and a few that stay reflective.
type shapes struct{ calls int }

type shapeRec struct {
	Name string
	N    int
}

type namedBytes []byte

func (s *shapes) E0(ctx context.Context) error { s.calls++; return nil }
func (s *shapes) R0(ctx context.Context) (*shapeRec, error) {
	s.calls++
	return &shapeRec{Name: "r0"}, nil
}
func (s *shapes) N0() (string, error)                         { return "n0", nil }
func (s *shapes) Nil0(ctx context.Context) (*shapeRec, error) { return nil, nil }
func (s *shapes) Any1(ctx context.Context, v any) (any, error) {
	if v == "fail" {
		return nil, errors.New("failed")
	}
	if v == "panic" {
		panic("boom")
	}
	return v, nil
}
func (s *shapes) Ptr1(ctx context.Context, r *shapeRec) (*shapeRec, error) {
	if r == nil {
		return nil, nil
	}
	return &shapeRec{Name: r.Name + "!", N: r.N + 1}, nil
}
func (s *shapes) Str1(v string) (string, error)                { return v + v, nil }
func (s *shapes) Int1(ctx context.Context, v int) (int, error) { return v * 2, nil }
func (s *shapes) I641(ctx context.Context, v int64) (int64, error) {
	return v - 1, nil
}
func (s *shapes) Bool1(ctx context.Context, v bool) (bool, error) { return !v, nil }
func (s *shapes) Bytes1(ctx context.Context, v []byte) ([]byte, error) {
	return append([]byte("b:"), v...), nil
}
func (s *shapes) Map1(ctx context.Context, v map[string]any) (map[string]any, error) {
	return map[string]any{"n": len(v)}, nil
}
func (s *shapes) Slice1(ctx context.Context, v []any) ([]any, error) { return append(v, "x"), nil }
func (s *shapes) Flt1(ctx context.Context, v float64) error {
	if v < 0 {
		return spi.Errorf(spi.StatusBadRequest, "negative %v", v)
	}
	return nil
}
func (s *shapes) Ctxless1(v int) error { return nil }
func (s *shapes) Two(ctx context.Context, a string, b int) (string, error) {
	return strings.Repeat(a, b), nil
}
func (s *shapes) TwoPtr(ctx context.Context, r *shapeRec, b any) (*shapeRec, error) {
	if r == nil {
		return nil, nil
	}
	return &shapeRec{Name: fmt.Sprint(r.Name, b), N: r.N}, nil
}
func (s *shapes) TwoErr(ctx context.Context, a any, b string) error { return nil }
func (s *shapes) TwoMixed(ctx context.Context, a int, b float64) (int, error) {
	return a + int(b), nil
}

// Reflective shapes.
func (s *shapes) Struct(ctx context.Context, r shapeRec) (shapeRec, error) {
	r.N++
	return r, nil
}
func (s *shapes) Three(ctx context.Context, a, b, c int) (int, error) { return a + b + c, nil }
func (s *shapes) Small(ctx context.Context, v uint8) (uint8, error)   { return v + 1, nil }
func (s *shapes) Named(ctx context.Context, v namedBytes) (namedBytes, error) {
	return v, nil
}
func (s *shapes) CtxlessTwo(a, b int) (int, error)                       { return a - b, nil }
func (s *shapes) TwoBytes(ctx context.Context, a, b []byte) (int, error) { return len(a) + len(b), nil }
func (s *shapes) Iface(ctx context.Context, v fmt.Stringer) (string, error) {
	return v.String(), nil
}

// reflectiveTable is newMethodTable(impl) with every method called by
// reflection, the reference the direct calls are held to.
func reflectiveTable(t *testing.T, impl any) *methodTable {
	t.Helper()
	mt, err := newMethodTable(impl)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mt.methods {
		m.direct = nil
	}
	return mt
}

func TestMethodDirectShapes(t *testing.T) {
	s := &shapes{}
	mt, err := newMethodTable(s)
	if err != nil {
		t.Fatal(err)
	}
	ref := reflectiveTable(t, s)
	reflective := map[string]bool{"N0": true, "Str1": true, "Ctxless1": true, "CtxlessTwo": true, "TwoMixed": true,
		"Struct": true, "Three": true, "Small": true, "Named": true, "TwoBytes": true, "Iface": true}
	for _, name := range mt.names {
		if direct := mt.methods[name].direct != nil; direct == reflective[name] {
			t.Errorf("%s: direct = %v, want %v", name, direct, !reflective[name])
		}
	}
	rec := &shapeRec{Name: "a", N: 4}
	calls := []struct {
		method string
		args   []any
	}{
		{"E0", nil}, {"R0", nil}, {"N0", nil}, {"Nil0", nil},
		{"Any1", []any{"v"}}, {"Any1", []any{nil}}, {"Any1", []any{map[string]any{"k": 1.5}}}, {"Any1", []any{"fail"}}, {"Any1", []any{"panic"}},
		{"Ptr1", []any{rec}}, {"Ptr1", []any{nil}}, {"Ptr1", []any{(*shapeRec)(nil)}}, {"Ptr1", []any{shapeRec{}}}, {"Ptr1", []any{"x"}},
		{"Str1", []any{"ab"}}, {"Str1", []any{nil}}, {"Str1", []any{1}},
		{"Int1", []any{21}}, {"Int1", []any{int64(21)}}, {"Int1", []any{21.9}}, {"Int1", []any{uint8(3)}}, {"Int1", []any{nil}}, {"Int1", []any{"21"}},
		{"I641", []any{int64(5)}}, {"I641", []any{5}},
		{"Bool1", []any{true}}, {"Bool1", []any{1}},
		{"Bytes1", []any{[]byte("x")}}, {"Bytes1", []any{namedBytes("y")}}, {"Bytes1", []any{nil}}, {"Bytes1", []any{"z"}},
		{"Map1", []any{map[string]any{"a": 1}}}, {"Map1", []any{nil}}, {"Map1", []any{map[string]int{}}},
		{"Slice1", []any{[]any{1}}}, {"Slice1", []any{nil}},
		{"Flt1", []any{1.5}}, {"Flt1", []any{-2.0}}, {"Flt1", []any{int64(-2)}},
		{"Ctxless1", []any{3}},
		{"Two", []any{"ab", 3}}, {"Two", []any{"ab", int64(2)}}, {"Two", []any{nil, nil}}, {"Two", []any{"a"}},
		{"TwoPtr", []any{rec, true}}, {"TwoPtr", []any{nil, true}}, {"TwoPtr", []any{rec, nil}}, {"TwoPtr", []any{*rec, 1}},
		{"TwoErr", []any{"x", "y"}}, {"TwoErr", []any{nil, nil}}, {"TwoErr", []any{1, 2}}, {"TwoMixed", []any{1, 2.5}},
		{"Struct", []any{shapeRec{Name: "s"}}}, {"Three", []any{1, 2, 3}}, {"Small", []any{uint8(1)}}, {"Small", []any{1}},
		{"Named", []any{namedBytes("n")}}, {"Named", []any{[]byte("n")}}, {"CtxlessTwo", []any{5, 3}}, {"TwoBytes", []any{[]byte("a"), nil}},
	}
	ctx := context.Background()
	for _, c := range calls {
		m, _ := mt.lookup("shapes", c.method)
		r, _ := ref.lookup("shapes", c.method)
		got := m.call(ctx, "shapes", c.args)
		want := r.call(ctx, "shapes", c.args)
		if !reflect.DeepEqual(got.Value, want.Value) || reflect.TypeOf(got.Value) != reflect.TypeOf(want.Value) ||
			fmt.Sprint(got.Err) != fmt.Sprint(want.Err) || spi.StatusOf(got.Err) != spi.StatusOf(want.Err) {
			t.Errorf("%s%v: direct = %#v, %v; reflective = %#v, %v", c.method, c.args, got.Value, got.Err, want.Value, want.Err)
		}
	}
	// The direct calls reach the exported value itself.
	before := s.calls
	m, _ := mt.lookup("shapes", "E0")
	m.call(ctx, "shapes", nil)
	if s.calls != before+1 {
		t.Fatalf("E0 through the direct call did not reach the exported value: calls %d -> %d", before, s.calls)
	}
	// A typed nil pointer result stays typed, as by reflection.
	m, _ = mt.lookup("shapes", "Nil0")
	if v := m.call(ctx, "shapes", nil).Value; reflect.TypeOf(v) != reflect.TypeFor[*shapeRec]() || v.(*shapeRec) != nil {
		t.Fatalf("Nil0 = %#v, want (*shapeRec)(nil)", v)
	}
}

// counter has value-receiver methods: a direct call works on a copy, as
// a reflective one does.
type counter struct{ n int }

func (c counter) Get(ctx context.Context) (int, error)         { return c.n, nil }
func (c counter) Bump(ctx context.Context, d int) (int, error) { c.n += d; return c.n, nil }

func TestMethodDirectValueReceiver(t *testing.T) {
	mt, err := newMethodTable(counter{n: 7})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	get, _ := mt.lookup("counter", "Get")
	bump, _ := mt.lookup("counter", "Bump")
	if get.direct == nil || bump.direct == nil {
		t.Fatal("value-receiver methods not called directly")
	}
	if r := bump.call(ctx, "counter", []any{3}); r.Value != 10 {
		t.Fatalf("Bump(3) = %+v", r)
	}
	if r := get.call(ctx, "counter", nil); r.Value != 7 {
		t.Fatalf("Get after Bump = %+v, want 7 (a value receiver works on a copy)", r)
	}
}

func TestMethodDirectPanicAndError(t *testing.T) {
	mt, _ := newMethodTable(&shapes{})
	m, _ := mt.lookup("shapes", "Any1")
	r := m.call(context.Background(), "shapes", []any{"panic"})
	var pe *panicError
	if spi.StatusOf(r.Err) != spi.StatusServerError || !errors.As(r.Err, &pe) || pe.value != "boom" {
		t.Fatalf("panic = %v", r.Err)
	}
	m, _ = mt.lookup("shapes", "Flt1")
	if r := m.call(context.Background(), "shapes", []any{-1.0}); spi.StatusOf(r.Err) != spi.StatusBadRequest {
		t.Fatalf("typed error = %v, want its own status BAD_REQUEST", r.Err)
	}
}

// TestMethodDirectEndToEnd calls direct shapes through a provider and a
// consumer node over loopback, the arguments and results crossing msgpack.
func TestMethodDirectEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	defer p.Close()
	e, err := p.Export(ctx, &shapes{}, spi.MustParse("airnode://127.0.0.1:0/test.Shapes"))
	if err != nil {
		t.Fatal(err)
	}
	c := NewNode(testCatalogs(t), WithLogger(quiet))
	defer c.Close()
	r, err := c.Refer(ctx, spi.MustParse("airnode://"+e.URL().Address()+"/test.Shapes?timeout=5s"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	var rec shapeRec
	if err := r.Call(ctx, "Ptr1", []any{&shapeRec{Name: "a", N: 1}}, &rec); err != nil || rec != (shapeRec{Name: "a!", N: 2}) {
		t.Fatalf("Ptr1 = %+v, %v", rec, err)
	}
	var s string
	if err := r.Call(ctx, "Two", []any{"ab", 3}, &s); err != nil || s != "ababab" {
		t.Fatalf("Two = %q, %v", s, err)
	}
	var n int
	if err := r.Call(ctx, "Int1", []any{21}, &n); err != nil || n != 42 {
		t.Fatalf("Int1 = %d, %v", n, err)
	}
	if v, err := r.Invoke(ctx, "Any1", "fail"); spi.StatusOf(err) != spi.StatusServiceError || v != nil {
		t.Fatalf("Any1(fail) = %v, %v", v, err)
	}
	if _, err := r.Invoke(ctx, "Flt1", -1.0); spi.StatusOf(err) != spi.StatusBadRequest {
		t.Fatalf("Flt1(-1) = %v, want BAD_REQUEST", err)
	}
	var st shapeRec
	if err := r.Call(ctx, "Struct", []any{shapeRec{Name: "s"}}, &st); err != nil || st != (shapeRec{Name: "s", N: 1}) {
		t.Fatalf("Struct (reflective) = %+v, %v", st, err)
	}
}

// filterFunc adapts a function to spi.Filter.
type filterFunc func(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result

func (f filterFunc) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	return f(ctx, next, inv)
}

// TestServeRemoteAttachment checks the attachments a provider filter sees
// (the consumer's plus "remote", in a pooled map when the consumer sent
// none) and that a result carrying that map keeps it.
func TestServeRemoteAttachment(t *testing.T) {
	mt, err := newMethodTable(demo.New("n", 100))
	if err != nil {
		t.Fatal(err)
	}
	var seen map[string]string
	echoBack := false
	f := filterFunc(func(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
		seen = maps.Clone(inv.Attachments)
		res := next.Invoke(ctx, inv)
		if echoBack {
			res.Attachments = inv.Attachments
		}
		return res
	})
	fs := []chainFilter{{name: "test", Filter: f}}
	s := &exportedService{key: "demo.Echo", table: mt, invoker: providerChain(fs, &localInvoker{table: mt}), filters: fs}
	srv := &server{abandon: context.Background()}
	serve := func(remote string, att map[string]string) spi.Result {
		t.Helper()
		req := &exchange.Request{Service: "demo.Echo", Method: "Echo", NumArgs: 1, Args: &sliceDecoder{vals: []any{any("x")}},
			Remote: remote, Attachments: att}
		res := s.serve(&providerCall{ctx: &callCtx{Context: context.Background(), s: srv}}, req)
		if res.Err != nil || res.Value != "x" {
			t.Fatalf("Echo = %+v", res)
		}
		return res
	}
	serve("10.0.0.1:1", nil)
	if !maps.Equal(seen, map[string]string{spi.AttachmentRemote: "10.0.0.1:1"}) {
		t.Fatalf("filter saw %v", seen)
	}
	serve("10.0.0.2:2", map[string]string{"k": "v"})
	if !maps.Equal(seen, map[string]string{"k": "v", spi.AttachmentRemote: "10.0.0.2:2"}) {
		t.Fatalf("filter saw %v", seen)
	}
	serve("", nil)
	if len(seen) != 0 {
		t.Fatalf("filter saw %v with no remote and no attachments", seen)
	}
	echoBack = true
	res := serve("10.0.0.3:3", nil)
	echoBack = false
	for range 10 {
		serve("10.0.0.4:4", nil)
	}
	if !maps.Equal(res.Attachments, map[string]string{spi.AttachmentRemote: "10.0.0.3:3"}) {
		t.Fatalf("result attachments = %v after later calls, want the map as returned", res.Attachments)
	}
}
