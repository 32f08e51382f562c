package sdk

import (
	"context"
	"strings"
	"testing"

	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
)

type t14Err struct{}

func (*t14Err) Error() string { return "never called on nil" }

type t14nils struct{}

func (t14nils) TypedNil(context.Context) (string, error) {
	var e *t14Err
	return "value", e
}

func (t14nils) NilSpiErr(context.Context) (string, error) {
	var e *spi.Error
	return "value", e
}

// tester14 finding 8, for a plugin service's method as for an in-process
// one (spi.MethodError): a typed nil error is named, not a panic; a nil
// *spi.Error is no error and the result is answered.
func TestT14_8_PluginMethodTypedNilErrors(t *testing.T) {
	h, err := newServiceHandler([]Service{{Name: "t.Nils", Impl: t14nils{}}})
	if err != nil {
		t.Fatal(err)
	}
	codec, _ := pluginrpc.CodecByName(pluginrpc.CodecMsgpack)
	_, err = h.Invoke(context.Background(), "t.Nils", "TypedNil", nil, codec, nil)
	if spi.StatusOf(err) != spi.StatusServiceError || !strings.Contains(err.Error(), "t.Nils.TypedNil returned a nil *sdk.t14Err as a non-nil error") {
		t.Errorf("TypedNil: %v", err)
	}
	b, err := h.Invoke(context.Background(), "t.Nils", "NilSpiErr", nil, codec, nil)
	var v string
	if err != nil || codec.Unmarshal(b, &v) != nil || v != "value" {
		t.Errorf("NilSpiErr: %q (%q), %v; want \"value\" and no error", b, v, err)
	}
}
