package sdktest_test

import (
	"context"
	"errors"
	"testing"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/extensions/lb/random"
	"github.com/airnode/airnode/extensions/registry/memory"
	"github.com/airnode/airnode/sdk"
	"github.com/airnode/airnode/sdk/sdktest"
	"github.com/airnode/airnode/spi"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRandomBalancerThroughGRPC(t *testing.T) {
	sdktest.TestLoadBalance(t, random.New())
}

func TestMemoryRegistryThroughGRPC(t *testing.T) {
	sdktest.TestRegistry(t, memory.NewBuilder(), spi.MustParse("memory://"))
}

type greeter struct{}

func (greeter) Hello(ctx context.Context, name string) (string, error) {
	if name == "" {
		return "", spi.Errorf(spi.StatusBadRequest, "greeter: empty name")
	}
	if name == "boom" {
		return "", errors.New("plain failure")
	}
	return "Hello, " + name + sdk.Attachments(ctx)["suffix"], nil
}

func (greeter) Add(a, b int) int { return a + b }

func TestServiceThroughGRPC(t *testing.T) {
	inv := sdktest.Service(t, sdk.Service{Name: "greeter.Greeter", Impl: greeter{}})
	ctx := context.Background()
	res := inv.Invoke(ctx, &spi.Invocation{Method: "Hello", Args: []any{"Ann"}, Attachments: map[string]string{"suffix": "!"}})
	if res.Err != nil || res.Value != "Hello, Ann!" {
		t.Fatalf("Hello(Ann) = %v, %v", res.Value, res.Err)
	}
	var sum int
	res = inv.Invoke(ctx, &spi.Invocation{Method: "Add", Args: []any{2, 3}, Reply: &sum})
	if res.Err != nil || sum != 5 {
		t.Fatalf("Add(2,3) = %v (%v), %v", sum, res.Value, res.Err)
	}
	for _, c := range []struct {
		method string
		args   []any
		want   spi.Status
	}{
		{"Hello", []any{""}, spi.StatusBadRequest},       // *spi.Error crosses intact
		{"Hello", []any{"boom"}, spi.StatusServiceError}, // a plain error becomes SERVICE_ERROR
		{"Nope", nil, spi.StatusServiceNotFound},
		{"Hello", nil, spi.StatusBadRequest}, // wrong arity
	} {
		res := inv.Invoke(ctx, &spi.Invocation{Method: c.method, Args: c.args})
		var se *spi.Error
		if !errors.As(res.Err, &se) || se.Status != c.want {
			t.Errorf("%s%v: err %v, want status %v", c.method, c.args, res.Err, c.want)
		}
	}
	res = inv.Invoke(ctx, &spi.Invocation{Method: "Hello", Args: []any{""}})
	if res.Err.Error() != "BAD_REQUEST: greeter: empty name" {
		t.Errorf("message not intact: %q", res.Err.Error())
	}
}
