package kernel

import (
	"context"
	"testing"

	"github.com/airnode/airnode/spi"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// cxNilSvc says whether its argument arrived nil, and answers (nil, nil)
// when asked to.
type cxNilSvc struct{}

func (cxNilSvc) Got(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
	if in == nil {
		return wrapperspb.String("nil"), nil
	}
	return wrapperspb.String("non-nil " + in.GetValue()), nil
}

func (cxNilSvc) Nothing(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
	return nil, nil
}

// The protobuf codec's nil cases, as Reference.Call documents them: a nil
// argument, untyped or a typed nil message, reaches the method as a nil
// pointer; a method's nil message result arrives, without an error, as
// an empty message in a *pb.T reply (its fields reset) and as nil in a
// **pb.T one.
func TestProtobufNilArgumentsAndResults(t *testing.T) {
	cat := testCatalogs(t)
	p := NewNode(cat, WithLogger(quiet), WithShutdownWait(0))
	defer p.Close()
	e, err := p.Export(ctxT(t), cxNilSvc{}, spi.MustParse("airnode://127.0.0.1:0/cx.Nil?codec=protobuf"))
	if err != nil {
		t.Fatal(err)
	}
	c := NewNode(cat, WithLogger(quiet))
	defer c.Close()
	r, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+e.URL().Address()+"/cx.Nil?codec=protobuf"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		arg  any
		want string
	}{
		{"untyped nil", nil, "nil"},
		{"typed nil", (*wrapperspb.StringValue)(nil), "nil"},
		{"empty message", &wrapperspb.StringValue{}, "non-nil "},
	} {
		var out wrapperspb.StringValue
		if err := r.Call(ctxT(t), "Got", []any{tc.arg}, &out); err != nil || out.GetValue() != tc.want {
			t.Errorf("%s argument: %q, %v; want %q", tc.name, out.GetValue(), err, tc.want)
		}
	}
	out := wrapperspb.String("stale")
	if err := r.Call(ctxT(t), "Nothing", []any{wrapperspb.String("x")}, out); err != nil || out.GetValue() != "" {
		t.Errorf("(nil, nil) into *pb.T: %q, %v; want an empty message, no error", out.GetValue(), err)
	}
	pout := wrapperspb.String("stale")
	if err := r.Call(ctxT(t), "Nothing", []any{wrapperspb.String("x")}, &pout); err != nil || pout != nil {
		t.Errorf("(nil, nil) into **pb.T: %v, %v; want nil, no error", pout, err)
	}
	v, err := r.Invoke(ctxT(t), "Nothing", wrapperspb.String("x"))
	if err != nil || v != nil {
		t.Errorf("(nil, nil) through Invoke: %v (%T), %v; want nil, no error", v, v, err)
	}
}
