package pluginrpc_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/airnode/airnode/sdk"
	"github.com/airnode/airnode/sdk/sdktest"
	"github.com/airnode/airnode/spi"
)

// linked is a node of a list, as an ORM's parent/child graph.
type linked struct {
	Name string
	Next *linked
}

// lists is a plugin service handing out and taking linked nodes.
type lists struct{}

// Loop returns a node whose Next is itself.
func (lists) Loop(context.Context) (*linked, error) {
	n := &linked{Name: "loop"}
	n.Next = n
	return n, nil
}

// Len counts the nodes of a list.
func (lists) Len(_ context.Context, n *linked) (int, error) {
	c := 0
	for ; n != nil; n = n.Next {
		c++
	}
	return c, nil
}

func serialization(err error, want string) bool {
	var se *spi.Error
	return errors.As(err, &se) && se.Status == spi.StatusSerializationError && strings.Contains(err.Error(), want)
}

// The plugin hop's msgpack (msgpack.Marshal) recursed into a cyclic value
// until a fatal stack overflow: a cyclic result killed the plugin process,
// a cyclic argument the host. Both are a SERIALIZATION_ERROR now, and the
// service keeps working.
func TestCyclicValueThroughPluginHop(t *testing.T) {
	inv := sdktest.Service(t, sdk.Service{Name: "acme.Lists", Impl: lists{}})
	ctx := context.Background()
	res := inv.Invoke(ctx, &spi.Invocation{Method: "Loop"})
	if !serialization(res.Err, "encountered a cycle via *pluginrpc_test.linked") {
		t.Errorf("cyclic result: %v, want a SERIALIZATION_ERROR naming *pluginrpc_test.linked", res.Err)
	}
	loop := &linked{Name: "arg"}
	loop.Next = loop
	res = inv.Invoke(ctx, &spi.Invocation{Method: "Len", Args: []any{loop}})
	if !serialization(res.Err, "encountered a cycle via *pluginrpc_test.linked") {
		t.Errorf("cyclic argument: %v, want a SERIALIZATION_ERROR naming *pluginrpc_test.linked", res.Err)
	}
	var n int
	res = inv.Invoke(ctx, &spi.Invocation{Method: "Len", Args: []any{&linked{Name: "a", Next: &linked{Name: "b"}}}, Reply: &n})
	if res.Err != nil || n != 2 {
		t.Fatalf("Len after the refusals: %d, %v", n, res.Err)
	}
}
