package greeter_test

import (
	"context"
	"errors"
	"testing"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/examples/greeter"
	"github.com/airnode/airnode/sdk"
	"github.com/airnode/airnode/sdk/sdktest"
	"github.com/airnode/airnode/spi"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestHelloThroughGRPC(t *testing.T) {
	inv := sdktest.Service(t, sdk.Service{Name: greeter.ServiceName, Impl: greeter.Greeter{}})
	res := inv.Invoke(context.Background(), &spi.Invocation{Method: "Hello", Args: []any{"Ann"}})
	if res.Err != nil || res.Value != "Hello, Ann" {
		t.Fatalf("Hello(Ann) = %v, %v", res.Value, res.Err)
	}
	res = inv.Invoke(context.Background(), &spi.Invocation{Method: "Hello", Args: []any{""}})
	if !errors.Is(res.Err, spi.ErrBadRequest) {
		t.Fatalf("Hello(\"\") err = %v, want BAD_REQUEST", res.Err)
	}
}
