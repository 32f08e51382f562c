package kernel

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

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
	args, err := m.decodeArgs("calc", 2, &sliceDecoder{vals: []any{1, 2}})
	if err != nil || !reflect.DeepEqual(args, []any{1, 2}) {
		t.Fatalf("decodeArgs = %v, %v", args, err)
	}
	if _, err := m.decodeArgs("calc", 1, &sliceDecoder{vals: []any{1}}); spi.StatusOf(err) != spi.StatusBadRequest {
		t.Fatalf("wrong count: %v", err)
	}
	if _, err := m.decodeArgs("calc", 2, &sliceDecoder{vals: []any{1, "x"}}); spi.StatusOf(err) != spi.StatusBadRequest {
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
