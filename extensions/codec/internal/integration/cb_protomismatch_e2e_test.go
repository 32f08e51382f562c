package integration

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/airnode/airnode/spi"
)

// tester91 #2: under codec=protobuf a typed Go caller's []byte or
// map[string]string for a message parameter (*wrapperspb.StringValue) was
// read through its JSON form: []byte{1,2} arrived as "AQI=" and
// map[string]string{"a":"b"} as an empty message (the unknown key dropped
// with a provider-side WARN), and the calls succeeded. Now both are
// BAD_REQUEST, the method not run, as msgpack refuses the equivalent and
// as a number or a bool for that parameter already was, naming the Go type
// sent and the message wanted. A Go string, the message's proto3 JSON
// form, is still taken, and so is a message of its type; the result side
// refuses the same way (BAD_RESPONSE).
func TestCb_ProtobufMessageParameterRefusesBytesAndStringMap(t *testing.T) {
	r := exportAs(t, Greeter{}, "cb.Greeter", "protobuf")
	for _, arg := range []any{"ann", wrapperspb.String("ann")} {
		var out wrapperspb.StringValue
		if err := r.Call(ctxT(t), "Greet", []any{arg}, &out); err != nil || out.GetValue() != "hello ann" {
			t.Errorf("Call(Greet, %#v) = %q, %v; want \"hello ann\"", arg, out.GetValue(), err)
		}
	}
	for _, c := range []struct {
		arg  any
		goes string
	}{
		{[]byte{1, 2}, "[]byte"},
		{map[string]string{"a": "b"}, "map[string]string"},
		{map[string]string{"value": "ann"}, "map[string]string"}, // not converted either, though its key names the field
	} {
		var out wrapperspb.StringValue
		err := r.Call(ctxT(t), "Greet", []any{c.arg}, &out)
		var e *spi.Error
		if !errors.As(err, &e) || e.Status != spi.StatusBadRequest {
			t.Errorf("Call(Greet, %#v) = %q, %v; want BAD_REQUEST", c.arg, out.GetValue(), err)
			continue
		}
		want := "cb.Greeter.Greet argument 0 (*wrapperspb.StringValue): got a Go " + c.goes + ", want message google.protobuf.StringValue ("
		if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "a message of its type (*wrapperspb.StringValue)") {
			t.Errorf("Call(Greet, %#v): %q, want it to contain %q and name the message's Go type", c.arg, err, want)
		}
	}
	// The result side: Echo returns a []byte, which a *wrapperspb.StringValue
	// reply does not take.
	var out wrapperspb.StringValue
	err := r.Call(ctxT(t), "Echo", []any{[]byte("hi")}, &out)
	if spi.StatusOf(err) != spi.StatusBadResponse || !strings.Contains(err.Error(), "got a Go []byte, want message google.protobuf.StringValue") {
		t.Errorf("Call(Echo) into *wrapperspb.StringValue = %q, %v; want BAD_RESPONSE naming []byte and the message", out.GetValue(), err)
	}
}
